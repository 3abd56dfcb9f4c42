package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// listener accepts clients for one pool; the pool behind it changes on
// reload, and each request uses the pool current when it is read.
type listener struct {
	name string
	ln   net.Listener
	// pool is shared with the listener that replaces this one when the
	// pool moves to another address, so that clients accepted here follow
	// every later reload of the pool.
	pool *atomicPool
}

// listen opens a listener for the pool p named name on addr.
func (s *Server) listen(ctx context.Context, name, addr string, p *pool) (*listener, error) {
	spec, err := parseListen(addr)
	if err != nil {
		return nil, fmt.Errorf("pool %q: %w", name, err)
	}
	ln, err := spec.open(ctx)
	if err != nil {
		return nil, fmt.Errorf("pool %q: %w", name, err)
	}
	l := &listener{name: name, ln: ln, pool: new(atomicPool)}
	l.pool.Store(p)
	s.log.Info("listening", "pool", name, "addr", ln.Addr().String(), "servers", len(p.backends))
	return l, nil
}

func (s *Server) acceptIn(l *listener) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.acceptLoop(l)
	}()
}

func (s *Server) acceptLoop(l *listener) {
	backoff := time.Millisecond
	for {
		conn, err := l.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: wait, as net/http does.
			s.log.Warn("accept", "pool", l.name, "err", err)
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = time.Millisecond
		if !s.track(conn, l) {
			conn.Close()
			return
		}
		p := l.pool.Load()
		st := p.stats
		if st.currConns.Load() >= int64(p.cfg.MaxClientConnections) {
			st.connRejected()
			_, _ = conn.Write(p.errorReply(ErrTooManyConns))
			s.untrack(conn)
			conn.Close()
			continue
		}
		st.connOpened()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.untrack(conn)
			defer st.connClosed()
			s.serveClient(l, conn)
		}()
	}
}

// track adds a client to the server's set, unless the server is closed.
func (s *Server) track(c net.Conn, l *listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.clients[c] = l
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.clients, c)
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
