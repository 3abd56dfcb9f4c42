package etcd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	grpcbackoff "google.golang.org/grpc/backoff"

	"github.com/kolco-dev/kolco/membership"
)

// Config says where the membership is and how to reach etcd. The zero
// values of the optional fields mean the documented defaults.
type Config struct {
	// Endpoints are etcd's client URLs, such as "http://127.0.0.1:2379"
	// or "https://etcd-0:2379". Required unless Client is set.
	Endpoints []string
	// Prefix is the key prefix of the membership, such as
	// "/kolco/cache/"; a missing final "/" is added. Required, and
	// checked by [CheckPrefix]: it starts with "/" and is more than "/".
	Prefix string

	// CAFile is a PEM file of the authorities that sign etcd's
	// certificate; CertFile and KeyFile a client certificate and its key,
	// for etcd's client certificate authentication. Any of them turns on
	// TLS, as does TLS.
	CAFile, CertFile, KeyFile string
	// TLS is a ready TLS configuration; the files above, when given,
	// are added to a copy of it.
	TLS *tls.Config
	// Username and Password authenticate to etcd when it has auth on.
	Username, Password string

	// Timeout bounds each request (read, write, the first connection).
	// Default 5s.
	Timeout time.Duration
	// CheckInterval is how often a watch asks etcd to confirm that it is
	// current (a progress request). A watch without a reply for this long
	// is reported stale. Default 1s.
	CheckInterval time.Duration

	// Client is an etcd client to use instead of dialling Endpoints; it
	// is not closed by [Store.Close], and the connection settings above are
	// not used.
	Client *clientv3.Client
}

// reconnectDelay is the longest wait between two attempts to reach etcd.
const reconnectDelay = 2 * time.Second

// Sub-keys of the prefix.
const (
	nodesKey   = "nodes/"
	stateKey   = "state"
	changedKey = "changed"
)

// Store is a membership in etcd: a [membership.Source] and the writes that
// change it. It is safe for concurrent use.
type Store struct {
	cfg    Config
	prefix string
	tls    *tls.Config

	mu     sync.Mutex // guards cli and closed
	cli    *clientv3.Client
	closed bool
}

// ErrClosed is returned by every request on a store after [Store.Close].
var ErrClosed = errors.New("etcd: store closed")

// CheckPrefix returns an error wrapping [membership.ErrBadConfig] unless
// prefix can hold a membership: not empty (that would read every key of
// the store), not "/" alone, and starting with "/".
//
// A prefix without the leading "/" is refused rather than given one: etcd
// compares keys byte for byte, so "kolco/cache/" and "/kolco/cache/" are
// two memberships, and a fleet that wrote its nodes under the first must
// not be moved to the second, empty one without a word. Refused, the
// spelling cannot differ between the proxies, clients and commands that
// must share one membership; and every example writes the "/".
func CheckPrefix(prefix string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: etcd: %s", membership.ErrBadConfig, fmt.Sprintf(format, args...))
	}
	switch {
	case prefix == "":
		return bad("no prefix: the membership must be under a prefix of its own, such as /kolco/cache/")
	case strings.Trim(prefix, "/") == "":
		return bad("prefix %q is the whole key space: the membership must be under a prefix of its own, such as /kolco/cache/", prefix)
	case prefix[0] != '/':
		return bad("prefix %q does not start with \"/\": etcd holds %q and %q as two memberships; write %q",
			prefix, prefix, "/"+prefix, "/"+prefix)
	}
	return nil
}

// New checks cfg and returns a store. It does not connect: the first
// request does, so that a store set up while etcd is away starts
// following it once it is back. The error wraps [membership.ErrBadConfig].
func New(cfg Config) (*Store, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: etcd: %s", membership.ErrBadConfig, fmt.Sprintf(format, args...))
	}
	if err := CheckPrefix(cfg.Prefix); err != nil {
		return nil, err
	}
	if cfg.Client == nil && len(cfg.Endpoints) == 0 {
		return nil, bad("no endpoints")
	}
	for _, e := range cfg.Endpoints {
		if e == "" || strings.ContainsAny(e, " \t\n") {
			return nil, bad("endpoint %q", e)
		}
	}
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return nil, bad("a client certificate needs both its file and its key file")
	}
	if (cfg.Username == "") != (cfg.Password == "") {
		return nil, bad("auth needs both a user name and a password")
	}
	if cfg.Timeout < 0 || cfg.CheckInterval < 0 {
		return nil, bad("negative timeout or check interval")
	}
	s := &Store{cfg: cfg, prefix: cfg.Prefix}
	if !strings.HasSuffix(s.prefix, "/") {
		s.prefix += "/"
	}
	t, err := loadTLS(cfg)
	if err != nil {
		return nil, bad("%v", err)
	}
	s.tls = t
	return s, nil
}

// Prefix returns the key prefix of the membership, ending in "/".
func (s *Store) Prefix() string { return s.prefix }

func (s *Store) timeout() time.Duration { return durationOr(s.cfg.Timeout, 5*time.Second) }
func (s *Store) checkInterval() time.Duration {
	return durationOr(s.cfg.CheckInterval, time.Second)
}

func durationOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// loadTLS returns the TLS configuration cfg asks for, or nil for none.
func loadTLS(cfg Config) (*tls.Config, error) {
	if cfg.TLS == nil && cfg.CAFile == "" && cfg.CertFile == "" {
		return nil, nil
	}
	t := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.TLS != nil {
		t = cfg.TLS.Clone()
	}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificate", cfg.CAFile)
		}
		t.RootCAs = pool
	}
	if cfg.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, err
		}
		t.Certificates = append(t.Certificates, cert)
	}
	return t, nil
}

// client returns the etcd client, connecting on first use. A failure is
// returned wrapping [membership.ErrUnreachable] and retried on the next
// call.
func (s *Store) client() (*clientv3.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return nil, ErrClosed
	case s.cfg.Client != nil:
		return s.cfg.Client, nil
	case s.cli != nil:
		return s.cli, nil
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   s.cfg.Endpoints,
		TLS:         s.tls,
		Username:    s.cfg.Username,
		Password:    s.cfg.Password,
		DialTimeout: s.timeout(),
		Logger:      zap.NewNop(), // failures are returned and reported, not logged
		// gRPC's reconnection backoff grows to two minutes: a watcher
		// would then catch up minutes after etcd is back. Capped at
		// reconnectDelay, it catches up within about that.
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           grpcbackoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: reconnectDelay},
			MinConnectTimeout: s.timeout(),
		})},
	})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			// gRPC says only that time ran out; a plain connection
			// says why (refused, a certificate not trusted).
			err = fmt.Errorf("%w (%w)", err, s.probe())
		}
		return nil, fmt.Errorf("%w: etcd %s: %w", membership.ErrUnreachable, strings.Join(s.cfg.Endpoints, ","), err)
	}
	s.cli = cli
	return cli, nil
}

// probe connects to the first endpoint as the client would, with TLS for
// an https URL, and returns why it fails, or a note that it does not.
func (s *Store) probe() error {
	u, err := url.Parse(s.cfg.Endpoints[0])
	if err != nil || u.Host == "" {
		return fmt.Errorf("endpoint %q is not a URL such as http://127.0.0.1:2379", s.cfg.Endpoints[0])
	}
	d := &net.Dialer{Timeout: time.Second}
	var c net.Conn
	if u.Scheme == "https" || s.tls != nil {
		t := &tls.Config{}
		if s.tls != nil {
			t = s.tls.Clone()
		}
		if t.ServerName == "" {
			t.ServerName = u.Hostname()
		}
		c, err = tls.DialWithDialer(d, "tcp", u.Host, t)
	} else {
		c, err = d.Dial("tcp", u.Host)
	}
	if err != nil {
		return err
	}
	c.Close()
	return errors.New("a plain connection succeeds")
}

// Close closes the store's connection to etcd (not a Client given in
// Config); every request after it fails with [ErrClosed], and a watcher
// still following the store stops with that error. Stop watchers and
// registrations first.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.cli == nil {
		return nil
	}
	err := s.cli.Close()
	s.cli = nil
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// request returns a context for one request, bounded by the timeout.
func (s *Store) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.timeout())
}
