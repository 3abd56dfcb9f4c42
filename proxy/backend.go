package proxy

import (
	"context"
	"sync/atomic"

	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// backend is one server of a pool: its connections, its health and its
// figures. Requests reach it through send and report how they ended
// through served and fail, so that the server keeps its own standing
// whoever sends to it.
type backend struct {
	pool   *pool
	spec   twemproxy.Server
	addr   string
	zone   string
	index  int // in the pool's backends
	conns  []*serverConn
	next   atomic.Uint32
	health health
	stats  *serverStats
	// failLog limits the lines logged for the server's failures.
	failLog logLimit

	// downErr is the error of every request refused while the server is
	// down: one value, so that refusing allocates nothing.
	downErr error

	// slot is the backend's index among the pool's servers, its former
	// ones after them (see migration.tainted).
	slot int
	// former marks a server the pool no longer has, kept for the reads
	// and deletes of a migration window: its failures mark nothing down.
	former bool
}

func newBackend(p *pool, spec twemproxy.Server) *backend {
	b := &backend{pool: p, spec: spec, addr: spec.Addr(), zone: p.cfg.zoneOf(spec), index: len(p.backends)}
	b.downErr = &ServerError{Addr: b.addr, Err: ErrServerDown}
	b.stats = newServerStats(p.met, p.name, b)
	for range p.cfg.ServerConnections {
		b.conns = append(b.conns, &serverConn{b: b})
	}
	return b
}

// send sends o on one of the server's connections, or fails it at once,
// without trying the server, while the server is down.
func (b *backend) send(o *op) {
	if b.health.isDown() {
		b.stats.failed(1)
		o.finish(b.downErr)
		return
	}
	b.conns[int(b.next.Add(1))%len(b.conns)].send(b.pool.ctx, o)
}

// preconnect opens every connection now rather than on first use.
func (b *backend) preconnect(ctx context.Context) {
	for _, c := range b.conns {
		c.mu.Lock()
		if !c.closed {
			_, _ = c.session(ctx, false)
		}
		c.mu.Unlock()
	}
}

// close ends every connection; requests still in flight fail.
func (b *backend) close() {
	for _, c := range b.conns {
		c.mu.Lock()
		c.closed = true
		if c.s != nil {
			c.s.end()
			c.s = nil
		}
		c.mu.Unlock()
	}
}
