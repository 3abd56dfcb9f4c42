package proxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"
)

// listener accepts clients for one pool; the pool behind it changes on
// reload, and each request uses the pool current when it is read.
type listener struct {
	name string
	ln   net.Listener
	// key names the socket for a process it is handed to (listenKey).
	key string
	// side is the pool's TLS listener beside a plaintext ln (tls.listen),
	// named sideKey; nil without one.
	side    net.Listener
	sideKey string
	// pool is shared with the listener that replaces this one when the
	// pool moves to another address, so that clients accepted here follow
	// every later reload of the pool.
	pool *atomicPool
	// gate, when not nil, holds the sockets until the pool's source has
	// answered (see gatePlaced).
	gate *placeGate
}

// listen opens a listener for the pool p named name on addr.
func (s *Server) listen(ctx context.Context, name, addr string, p *pool) (*listener, error) {
	spec, err := parseListen(addr)
	if err != nil {
		return nil, fmt.Errorf("pool %q: %w", name, err)
	}
	spec.backlog = p.cfg.Backlog
	ln, err := s.sockets.open(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("pool %q: %w", name, err)
	}
	l := &listener{name: name, ln: ln, key: listenKey(spec.network, spec.addr), pool: new(atomicPool)}
	if t := p.cfg.TLS; t != nil && t.Listen != "" {
		sideSpec, err := parseListen(t.Listen)
		if err == nil {
			sideSpec.backlog = p.cfg.Backlog
			l.side, err = s.sockets.open(ctx, sideSpec)
		}
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("pool %q: tls.listen: %w", name, err)
		}
		l.sideKey = listenKey(sideSpec.network, sideSpec.addr)
		s.log.Info("listening with TLS", "pool", name, "addr", l.side.Addr().String())
	}
	l.pool.Store(p)
	if p.members != nil && p.members.placeholder {
		l.gatePlaced(s.log)
	}
	s.log.Info("listening", "pool", name, "addr", ln.Addr().String(), "servers", len(p.backends))
	for _, why := range p.cfg.ignoredSettings() {
		s.log.Warn("setting ignored, as nutcracker ignores it", "pool", name, "setting", why)
	}
	return l, nil
}

func (s *Server) acceptIn(l *listener) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.acceptLoop(l, l.ln, l.key, false)
	}()
	if l.side != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.acceptLoop(l, l.side, l.sideKey, true)
		}()
	}
}

// close closes the listener's sockets.
func (l *listener) close() {
	l.ln.Close()
	if l.side != nil {
		l.side.Close()
	}
}

// acceptLoop accepts the clients of ln, a socket of l named key; side
// says it is l's TLS socket beside a plaintext one.
func (s *Server) acceptLoop(l *listener, ln net.Listener, key string, side bool) {
	backoff := time.Millisecond
	for {
		conn, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: wait, as net/http does.
			s.log.Warn("accepting a client failed", "pool", l.name, "err", err)
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = time.Millisecond
		conn = clientConn(l.pool.Load(), conn, side)
		c := &client{conn: conn, pool: l.pool, budget: s.budget, log: s.log, listenKey: key}
		if !s.track(c) {
			conn.Close()
			return
		}
		s.serveClient(l, c)
	}
}

// serveClient serves c, accepted on l or handed over from another
// process, on a goroutine of its own, unless the pool is at
// max_client_connections: then c is refused.
func (s *Server) serveClient(l *listener, c *client) {
	conn := c.conn
	p := l.pool.Load()
	st := p.stats
	if st.currConns.Load() >= int64(p.cfg.MaxClientConnections) {
		st.connRejected()
		if ok, held := p.refuseLog.allow(); ok {
			s.log.Warn("client refused: over max_client_connections", "pool", l.name,
				"remote", conn.RemoteAddr(), "limit", p.cfg.MaxClientConnections, "refusals_not_logged", held)
		}
		_, _ = conn.Write(p.front.errorReply(ErrTooManyConns))
		s.untrack(c)
		conn.Close()
		return
	}
	st.connOpened()
	s.log.Debug("client accepted", "pool", l.name, "remote", conn.RemoteAddr())
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.untrack(c)
		defer st.connClosed()
		if !handshakeClient(p, c) {
			conn.Close()
			return
		}
		p.front.serve(c)
		s.log.Debug("client closed", "pool", l.name, "remote", conn.RemoteAddr())
	}()
}

// track adds a client to the server's set, unless the server was
// aborted. A client accepted as the server began to shut down - the
// accept raced with the listener's close - is served and drained like
// the others: its connection was not refused, and its requests must be
// answered.
func (s *Server) track(c *client) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.aborted {
		return false
	}
	s.clients[c.conn] = c
	s.lastID++
	c.id = s.lastID
	c.peers = func() []*client {
		s.mu.Lock()
		var out []*client
		for _, o := range s.clients {
			if o.pool == c.pool {
				out = append(out, o)
			}
		}
		s.mu.Unlock()
		slices.SortFunc(out, func(a, b *client) int { return cmp.Compare(a.id, b.id) })
		return out
	}
	if s.closed {
		c.drains.handover.Store(s.handover)
		c.drain()
	}
	return true
}

func (s *Server) untrack(c *client) {
	s.mu.Lock()
	delete(s.clients, c.conn)
	s.mu.Unlock()
}

// stopReading ends the client's request stream as if it had half-closed:
// requests already read are still answered.
func stopReading(c net.Conn) {
	if tc, ok := c.(interface{ CloseRead() error }); ok && tc.CloseRead() == nil {
		return
	}
	_ = c.SetReadDeadline(time.Now())
}
