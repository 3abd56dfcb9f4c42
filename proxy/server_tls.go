package proxy

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
)

// certCheckEvery is how often the TLS files are checked for a change.
const certCheckEvery = time.Second

// forPool reads the TLS files of p's configuration, relative paths taken
// from dir (held once per set of files by the registry), into p. The
// error is a [*ConfigError].
func (r *certRegistry) forPool(p *pool, dir string) error {
	if t := p.cfg.TLS; t != nil {
		files, err := r.get(inDir(dir, t.CertFile), inDir(dir, t.KeyFile), inDir(dir, t.ClientCAFile))
		if err != nil {
			return &ConfigError{Pool: p.name, Key: "tls", Err: err}
		}
		p.clientTLS = files.listenConfig()
	}
	if t := p.cfg.ServerTLS; t != nil {
		files, err := r.get(inDir(dir, t.CertFile), inDir(dir, t.KeyFile), inDir(dir, t.CAFile))
		if err != nil {
			return &ConfigError{Pool: p.name, Key: "server_tls", Err: err}
		}
		p.serverTLS = files
	}
	if m := p.cfg.Membership; m != nil && m.Sentinel != nil && m.Sentinel.TLS != nil {
		cfg, err := r.sentinelTLS(m.Sentinel.TLS, dir)
		if err != nil {
			return &ConfigError{Pool: p.name, Key: "membership", Err: err}
		}
		p.sentinelTLS = cfg
	}
	return nil
}

// watch reads the TLS files again whenever they change, until stopped
// reports the server shuts down.
func (r *certRegistry) watch(stopped func() bool, log *slog.Logger) {
	t := time.NewTicker(certCheckEvery)
	defer t.Stop()
	for range t.C {
		if stopped() {
			return
		}
		r.reloadAll(log)
	}
}

// clientConn returns conn as the pool's clients speak on the socket it
// came in on: over TLS on the TLS socket beside a plaintext one (side),
// or on listen when it speaks TLS alone.
func clientConn(p *pool, conn net.Conn, side bool) net.Conn {
	if p.clientTLS == nil || !side && p.cfg.TLS.Listen != "" {
		return conn
	}
	return tls.Server(conn, p.clientTLS)
}

// clientHandshakeTimeout bounds a client's TLS handshake.
const clientHandshakeTimeout = 10 * time.Second

// ErrPlaintextOnTLS is the error a client that speaks without TLS to a
// pool's TLS listener reads before its connection is closed.
var ErrPlaintextOnTLS = errors.New("this port speaks TLS: connect with TLS")

// handshakeClient makes a TLS client's handshake before its first
// request, and reports whether it succeeded. A client that sent plaintext
// is answered in plaintext with [ErrPlaintextOnTLS] in its protocol's
// words, so that it sees why; every failure is logged at debug level.
func handshakeClient(p *pool, c *client) bool {
	tc, ok := c.conn.(*tls.Conn)
	if !ok {
		return true
	}
	_ = tc.SetDeadline(time.Now().Add(clientHandshakeTimeout))
	err := tc.Handshake()
	_ = tc.SetDeadline(time.Time{})
	if err == nil {
		return true
	}
	var rhe tls.RecordHeaderError
	if errors.As(err, &rhe) && rhe.Conn != nil {
		_ = rhe.Conn.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = rhe.Conn.Write(p.front.errorReply(ErrPlaintextOnTLS))
	}
	p.log.Debug("client TLS handshake failed", "remote", tc.RemoteAddr(), "err", err)
	return false
}

// adminTLS returns the TLS configuration of the admin endpoint, /metrics
// and (with stats_tls) the stats port, or nil for plaintext; relative
// paths are taken from dir.
func (r *certRegistry) adminTLS(g *GlobalConfig, dir string) (*tls.Config, error) {
	t := g.AdminTLS
	if t == nil {
		return nil, nil
	}
	files, err := r.get(inDir(dir, t.CertFile), inDir(dir, t.KeyFile), inDir(dir, t.ClientCAFile))
	if err != nil {
		return nil, &ConfigError{Key: GlobalKey + ".admin_tls", Err: err}
	}
	return files.listenConfig(), nil
}

// peerClient returns the HTTP client the proxy asks its peers with:
// verifying their https certificates against admin_peer_ca_file when set,
// presenting admin_tls's certificate to peers that ask for one; relative
// paths are taken from dir.
func (r *certRegistry) peerClient(g *GlobalConfig, dir string) (*http.Client, error) {
	if g.AdminPeerCAFile == "" && g.AdminTLS == nil {
		return http.DefaultClient, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if g.AdminPeerCAFile != "" {
		files, err := r.get("", "", inDir(dir, g.AdminPeerCAFile))
		if err != nil {
			return nil, &ConfigError{Key: GlobalKey + ".admin_peer_ca_file", Err: err}
		}
		cfg.RootCAs = files.ca.Load()
	}
	if t := g.AdminTLS; t != nil {
		files, err := r.get(inDir(dir, t.CertFile), inDir(dir, t.KeyFile), inDir(dir, t.ClientCAFile))
		if err != nil {
			return nil, &ConfigError{Key: GlobalKey + ".admin_tls", Err: err}
		}
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return files.cert.Load(), nil }
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, Proxy: nil}}, nil
}

// peerAddrs returns the peers as the proxy asks them: host:port as https
// when the fleet's admin endpoints serve it (admin_peer_ca_file set).
func peerAddrs(g *GlobalConfig) []string {
	if g.AdminPeerCAFile == "" {
		return g.AdminPeers
	}
	out := make([]string, len(g.AdminPeers))
	for i, p := range g.AdminPeers {
		if !strings.Contains(p, "://") {
			p = "https://" + p
		}
		out[i] = p
	}
	return out
}

// tlsListener returns ln serving TLS with cfg, or ln when cfg is nil.
func tlsListener(ln net.Listener, cfg *tls.Config) net.Listener {
	if cfg == nil {
		return ln
	}
	return tls.NewListener(ln, cfg)
}

// sentinelTLS returns the TLS configuration of connections to a pool's
// Sentinels, its files taken from dir when relative: verified against the
// authority as read now, and offering the client certificate as read at
// each handshake. Its ServerName is empty unless server_name is set: the
// dialer sets each Sentinel's host.
func (r *certRegistry) sentinelTLS(t *SentinelTLS, dir string) (*tls.Config, error) {
	files, err := r.get(inDir(dir, t.CertFile), inDir(dir, t.KeyFile), inDir(dir, t.CAFile))
	if err != nil {
		return nil, err
	}
	return files.dialConfig(t.ServerName), nil
}
