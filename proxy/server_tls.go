package proxy

import (
	"crypto/tls"
	"errors"
	"net"
	"path/filepath"
	"time"
)

// certCheckEvery is how often the TLS files are checked for a change.
const certCheckEvery = time.Second

// poolTLS reads the TLS files of p's configuration (held once per set of
// files by the server's registry) into p. The error is a [*ConfigError].
func (s *Server) poolTLS(p *pool) error {
	dir := ""
	if s.cfg.Path != "" {
		dir = filepath.Dir(s.cfg.Path)
	}
	if t := p.cfg.TLS; t != nil {
		files, err := s.certs.get(inDir(dir, t.CertFile), inDir(dir, t.KeyFile), inDir(dir, t.ClientCAFile))
		if err != nil {
			return &ConfigError{Pool: p.name, Key: "tls", Err: err}
		}
		p.clientTLS = files.listenConfig()
	}
	if t := p.cfg.ServerTLS; t != nil {
		files, err := s.certs.get(inDir(dir, t.CertFile), inDir(dir, t.KeyFile), inDir(dir, t.CAFile))
		if err != nil {
			return &ConfigError{Pool: p.name, Key: "server_tls", Err: err}
		}
		p.serverTLS = files
	}
	return nil
}

// watchCerts reads the TLS files again whenever they change, until the
// server shuts down.
func (s *Server) watchCerts() {
	t := time.NewTicker(certCheckEvery)
	defer t.Stop()
	for range t.C {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return
		}
		s.certs.reloadAll(s.log)
	}
}

// clientConn returns conn as the pool's clients speak: over TLS when the
// pool's listener serves TLS (the handshake is made at the first read).
func clientConn(p *pool, conn net.Conn) net.Conn {
	if p.clientTLS == nil {
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
