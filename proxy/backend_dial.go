package proxy

import (
	"context"
	"net"
	"time"
)

// connect connects a new session. A failed connect is one failure
// towards the server's ejection, however many senders waited for it, and
// is the error of each of them (each counts it among the server's
// errors). The caller holds mu; connect releases it while a connect is
// under way and holds it again when it returns.
func (c *serverConn) connect(ctx context.Context) (*session, error) {
	if call := c.connecting; call != nil {
		c.mu.Unlock()
		<-call.done
		c.mu.Lock()
		switch {
		case call.err != nil:
			return nil, call.err
		case c.closed:
			return nil, ErrPoolClosed
		case c.s == nil:
			return nil, &ServerError{Addr: c.b.addr, Err: ErrConnLost}
		}
		return c.s, nil
	}
	call := &connectCall{done: make(chan struct{})}
	c.connecting = call
	c.mu.Unlock()
	s, err := c.dial(ctx)
	c.mu.Lock()
	c.connecting = nil
	if err == nil && c.closed {
		s.end()
		err = ErrPoolClosed
	}
	if err == nil {
		c.s = s
	}
	call.err = err
	close(call.done)
	if err != nil {
		c.b.fail(err, 0)
		return nil, err
	}
	return s, nil
}

// dial connects a new session; its error is a [*ServerError].
func (c *serverConn) dial(ctx context.Context) (*session, error) {
	// A down server is not dialled, whatever the policy: under rehash,
	// requests routed to it just before it was ejected would otherwise
	// connect one after another under the connection's lock, each waiting
	// out the timeout while the clients behind them wait too.
	if c.b.health.isDown() {
		return nil, c.b.downErr
	}
	d := net.Dialer{Timeout: c.b.pool.cfg.Timeout}
	c.b.stats.dials.Add(1)
	conn, err := d.DialContext(ctx, network(c.b.addr), c.b.addr)
	if err == nil {
		conn, err = c.b.clientTLS(ctx, conn, c.b.pool.cfg.Timeout)
	}
	if err != nil {
		err = serverError(c.b.addr, "connect", err)
		c.b.stats.closed(err)
		return nil, err
	}
	if err := c.b.pool.front.handshake(c.b, conn, c.dialect); err != nil {
		conn.Close()
		c.b.stats.closed(err)
		return nil, err
	}
	c.b.stats.conns.Add(1)
	c.b.pool.log.Debug("server connection opened", "server", c.b.addr, "local", conn.LocalAddr())
	s := &session{conn: conn, rw: conn}
	if r := newRawIO(conn); r != nil {
		s.rw = r
	}
	s.readerWG.Add(1)
	go s.read(c.b)
	return s, nil
}

// dialOwn opens a connection of its own to b, for a probe, a request of
// the proxy's or a sweep, its deadline timeout from now; the caller
// closes it.
func (b *backend) dialOwn(ctx context.Context, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(ctx, network(b.addr), b.addr)
	if err == nil {
		conn, err = b.clientTLS(ctx, conn, timeout)
	}
	if err != nil {
		return nil, err
	}
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}
