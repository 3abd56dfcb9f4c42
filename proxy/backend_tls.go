package proxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// certFiles are a certificate with its key, an authority's certificates,
// or both, read from files and read again when the files change. Readers
// take the current ones; a reload that fails leaves them as they were.
type certFiles struct {
	certFile, keyFile, caFile string

	mu    sync.Mutex // serializes reloads
	stamp string     // the files' sizes and times as last read
	// refused is the stamp of files refused, or the error of files that
	// could not be looked at, so that each refusal is reported once per
	// change of the files, not at every check while they stay.
	refused string

	cert atomic.Pointer[tls.Certificate]
	ca   atomic.Pointer[x509.CertPool]
	// notAfter is when the certificate expires (Unix seconds), 0 without
	// one.
	notAfter atomic.Int64
}

// errCertExpired is the error of a certificate past its NotAfter.
var errCertExpired = errors.New("the certificate has expired")

// reload reads the files again if they changed since the last read. It
// reports whether it took new ones - or found again the ones in use,
// after files it refused; on error the ones in use stay. Files refused
// once, unchanged since, are neither read nor reported again.
func (c *certFiles) reload(now time.Time) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	stamp, err := c.statFiles()
	if err != nil {
		if c.refused == err.Error() {
			return false, nil
		}
		c.refused = err.Error()
		return false, err
	}
	switch stamp {
	case c.stamp:
		back := c.refused != ""
		c.refused = ""
		return back, nil
	case c.refused:
		return false, nil
	}
	changed, err := c.load(now, stamp)
	if err != nil {
		c.refused = stamp
		return false, err
	}
	c.refused = ""
	return changed, nil
}

// load reads the files, whose stamp is stamp, and takes them.
func (c *certFiles) load(now time.Time, stamp string) (bool, error) {
	var cert *tls.Certificate
	if c.certFile != "" {
		kp, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
		if err != nil {
			return false, fmt.Errorf("%s and %s: %w", c.certFile, c.keyFile, err)
		}
		if kp.Leaf == nil {
			if kp.Leaf, err = x509.ParseCertificate(kp.Certificate[0]); err != nil {
				return false, fmt.Errorf("%s: %w", c.certFile, err)
			}
		}
		if now.After(kp.Leaf.NotAfter) {
			return false, fmt.Errorf("%s: %w (not after %s)", c.certFile, errCertExpired, kp.Leaf.NotAfter.UTC().Format(time.RFC3339))
		}
		cert = &kp
	}
	var ca *x509.CertPool
	if c.caFile != "" {
		data, err := os.ReadFile(c.caFile)
		if err != nil {
			return false, err
		}
		ca = x509.NewCertPool()
		if !ca.AppendCertsFromPEM(data) {
			return false, fmt.Errorf("%s: no PEM certificate in it", c.caFile)
		}
	}
	if cert != nil {
		c.cert.Store(cert)
		c.notAfter.Store(cert.Leaf.NotAfter.Unix())
	}
	if ca != nil {
		c.ca.Store(ca)
	}
	c.stamp = stamp
	return true, nil
}

// statFiles returns the files' sizes and modification times.
func (c *certFiles) statFiles() (string, error) {
	var b strings.Builder
	for _, f := range []string{c.certFile, c.keyFile, c.caFile} {
		if f == "" {
			continue
		}
		st, err := os.Stat(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s %d %d;", f, st.Size(), st.ModTime().UnixNano())
	}
	return b.String(), nil
}

// listenConfig returns the TLS configuration of a listener with these
// files: their certificate, and, with an authority, clients' certificates
// required and verified against it; read at each handshake, so that a
// reload applies to the next client.
func (c *certFiles) listenConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{*c.cert.Load()}}
			if ca := c.ca.Load(); ca != nil {
				cfg.ClientAuth, cfg.ClientCAs = tls.RequireAndVerifyClientCert, ca
			}
			return cfg, nil
		},
	}
}

// dialConfig returns the TLS configuration of a connection to a server
// named serverName: verified against the files' authority (the system's
// without one), with their certificate as the client's, if any.
func (c *certFiles) dialConfig(serverName string) *tls.Config {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName, RootCAs: c.ca.Load()}
	if c.certFile != "" {
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return c.cert.Load(), nil }
	}
	return cfg
}

// certRegistry holds the TLS files the server's pools use, each read
// once however many pools name it, and reads them again when they change.
type certRegistry struct {
	mu    sync.Mutex
	files map[string]*certFiles
}

// get returns the files of cert, key and ca, read now if not held yet.
func (r *certRegistry) get(cert, key, ca string) (*certFiles, error) {
	k := cert + "\x00" + key + "\x00" + ca
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.files[k]; c != nil {
		return c, nil
	}
	c := &certFiles{certFile: cert, keyFile: key, caFile: ca}
	if _, err := c.reload(time.Now()); err != nil {
		return nil, err
	}
	if r.files == nil {
		r.files = map[string]*certFiles{}
	}
	r.files[k] = c
	return c, nil
}

// reloadAll reads again every file that changed, logging each reload and
// each refusal (the files in use stay), once per change of the files.
func (r *certRegistry) reloadAll(log *slog.Logger) {
	r.mu.Lock()
	all := make([]*certFiles, 0, len(r.files))
	for _, c := range r.files {
		all = append(all, c)
	}
	r.mu.Unlock()
	for _, c := range all {
		changed, err := c.reload(time.Now())
		switch {
		case err != nil:
			log.Error("TLS files not reloaded: the ones in use stay; said again only when the files change", "cert", c.certFile, "ca", c.caFile, "err", err)
		case changed:
			log.Info("TLS files reloaded", "cert", c.certFile, "ca", c.caFile, "not_after", time.Unix(c.notAfter.Load(), 0).UTC())
		}
	}
}

// expiries returns each certificate file held and when it expires, in
// file order.
func (r *certRegistry) expiries() []certExpiry {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []certExpiry
	for _, c := range r.files {
		if c.certFile != "" {
			out = append(out, certExpiry{file: c.certFile, notAfter: time.Unix(c.notAfter.Load(), 0)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].file < out[j].file })
	return out
}

type certExpiry struct {
	file     string
	notAfter time.Time
}

// clientTLS returns conn over TLS to b when its pool reaches its servers
// so, the handshake done within timeout; else conn. On error conn is
// closed.
func (b *backend) clientTLS(ctx context.Context, conn net.Conn, timeout time.Duration) (net.Conn, error) {
	return b.pool.serverConn(ctx, conn, b.name(), b.addr, timeout)
}

// serverConn returns conn over TLS to the server of the pool named name
// (empty for a server the pool reaches but does not name, such as a
// replica) at addr when the pool reaches its servers so, the handshake
// done within timeout; else conn. On error conn is closed.
func (p *pool) serverConn(ctx context.Context, conn net.Conn, name, addr string, timeout time.Duration) (net.Conn, error) {
	files := p.serverTLS
	if files == nil {
		return conn, nil
	}
	tc := tls.Client(conn, files.dialConfig(p.cfg.ServerTLS.serverName(name, addr)))
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("%w: %w", errTLSHandshake, err)
	}
	return tc, nil
}

// dialSweep opens a connection of its own to b for a listing of its
// items, over TLS when the pool reaches its servers so; the listing sets
// its own deadlines.
func (b *backend) dialSweep(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network(b.addr), b.addr)
	if err != nil {
		return nil, err
	}
	return b.clientTLS(ctx, conn, b.pool.cfg.Timeout)
}
