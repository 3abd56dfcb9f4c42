package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// health is a server's standing: marked down or not, its consecutive
// failures, and when a down server may be tried again.
type health struct {
	// down is set while the server is ejected or marked down; requests
	// read it without a lock.
	down atomic.Bool
	// mu guards failures and retryAt.
	mu       sync.Mutex
	failures int
	retryAt  time.Time
}

func (h *health) isDown() bool { return h.down.Load() }

// succeeded ends a run of failures.
func (h *health) succeeded() {
	h.mu.Lock()
	h.failures = 0
	h.mu.Unlock()
}

// failed counts a failure and reports whether it marks the server down:
// the limit-th consecutive failure of a server that is not down yet does,
// and the server may be tried again after retry.
func (h *health) failed(limit int, retry time.Duration) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failures++
	if h.down.Load() || h.failures < limit {
		return false
	}
	h.down.Store(true)
	h.retryAt = time.Now().Add(retry)
	return true
}

// restore marks the server up and reports whether it was down.
func (h *health) restore() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failures = 0
	return h.down.Swap(false)
}

// retryAfter sets the next try of a down server to d from now.
func (h *health) retryAfter(d time.Duration) {
	h.mu.Lock()
	h.retryAt = time.Now().Add(d)
	h.mu.Unlock()
}

// retryTime returns when a down server may be tried again.
func (h *health) retryTime() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.retryAt
}

// inherit makes h down, with old's failures and retry time, when old is
// down, and reports whether it was.
func (h *health) inherit(old *health) bool {
	if !old.isDown() {
		return false
	}
	old.mu.Lock()
	failures, retryAt := old.failures, old.retryAt
	old.mu.Unlock()
	h.mu.Lock()
	h.failures, h.retryAt = failures, retryAt
	h.down.Store(true)
	h.mu.Unlock()
	return true
}

// served records a reply from the server: its failures start again.
func (b *backend) served() { b.health.succeeded() }

// fail records that n requests failed at the server with err. Each is an
// error in the server's figures; together they are one failure towards
// ejection, as in twemproxy, where a connection that fails with several
// requests on it counts once. A request refused because the server is down
// or the pool is closing did not try the server and is no failure; under
// ejection none no server is ever marked down.
func (b *backend) fail(err error, n int) {
	b.stats.failed(n)
	if b.former {
		return // not the pool's: a migration stops reading it instead
	}
	cfg := b.pool.cfg
	if errors.Is(err, ErrPoolClosed) || errors.Is(err, ErrServerDown) {
		return
	}
	b.logFailure(err, n)
	if cfg.Ejection == EjectNone {
		return
	}
	if b.health.failed(cfg.ServerFailureLimit, cfg.ServerRetryTimeout) {
		b.stats.ejected()
		b.pool.healthChanged(b, false, err)
	}
}

// logFailure logs a failure of the server, under every ejection policy,
// at most once per logEvery: the line says how many failures it stands for.
func (b *backend) logFailure(err error, n int) {
	ok, held := b.failLog.allow()
	if !ok {
		return
	}
	b.pool.log.Warn("server failed", "server", b.spec.RingName(), "addr", b.addr, "policy", b.pool.cfg.Ejection,
		"requests", n, "failures_not_logged", held, "err", err)
}

// restore marks the server up again.
func (b *backend) restore() {
	if b.health.restore() {
		b.stats.restores.Add(1)
		b.pool.healthChanged(b, true, nil)
	}
}

// healthChanged is called when b goes down or comes back.
func (p *pool) healthChanged(b *backend, up bool, cause error) {
	if up {
		p.log.Info("server restored", "server", b.spec.RingName(), "addr", b.addr)
	} else {
		p.log.Warn("server down", "server", b.spec.RingName(), "addr", b.addr, "policy", p.cfg.Ejection, "cause", cause)
	}
	if p.cfg.Ejection == EjectRehash {
		if err := p.rebuild(); err != nil {
			p.log.Error("placement rebuild failed", "err", err)
		}
	}
}

// restore brings b back. In a pool with replicas, or under rehash, it
// first empties b, which missed the writes and deletes made while it was
// down (made to the key's other copies, or under rehash to the server
// that stood in for it), so that it never serves a value older than one
// written meanwhile. If that fails, b stays down: with probes, until the
// next probe; without, it is ejected again for server_retry_timeout, as
// nutcracker ejects a server again at its first failed request.
func (p *pool) restore(b *backend) {
	// A Redis server is never emptied: its data may be all there is of it.
	if !p.cfg.Redis && (p.cfg.Replicas > 1 || p.cfg.Ejection == EjectRehash) {
		if err := b.flush(p.ctx, p.cfg.Timeout); err != nil {
			p.log.Warn("server not restored: flush_all before rejoining failed", "server", b.addr, "err", err)
			if p.cfg.HealthCheck.Interval < 0 {
				b.health.retryAfter(p.cfg.ServerRetryTimeout)
				b.stats.ejected()
			}
			return
		}
		p.log.Info("server emptied before rejoining: it missed the writes made while it was down", "server", b.addr)
	}
	p.restoreChange(b.restore)
}

// healthLoop restores down servers: with probes, when a probe succeeds;
// without, when their retry time has come (twemproxy's behaviour).
func (p *pool) healthLoop() {
	every := p.cfg.HealthCheck.Interval
	if every <= 0 {
		// No probes: a down server returns at its retry time. Checked a
		// tenth as often, so that it returns within 10% of it rather than
		// up to a whole period late.
		every = p.cfg.ServerRetryTimeout / 10
	}
	t := time.NewTicker(max(every, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-t.C:
		}
		for _, b := range p.backends {
			if b.health.isDown() {
				p.check(b)
			}
		}
	}
}

// check restores the down server b if it is time: when its probe succeeds,
// or, without probes, when its retry time has come.
func (p *pool) check(b *backend) {
	if p.cfg.HealthCheck.Interval < 0 {
		if time.Now().After(b.health.retryTime()) {
			p.restore(b)
		}
		return
	}
	if err := b.probe(p.ctx, p.cfg.HealthCheck.Timeout); err != nil {
		p.log.Debug("probe failed", "server", b.addr, "err", err)
		return
	}
	p.restore(b)
}

// probe asks the server for its version on a fresh connection; a Redis
// server, for PING.
func (b *backend) probe(ctx context.Context, timeout time.Duration) error {
	if b.pool.cfg.Redis {
		return b.probeRedis(ctx, timeout)
	}
	reply, err := b.ask(ctx, timeout, "version\r\n", memcache.CmdVersion)
	if err != nil {
		return err
	}
	if len(reply) < 8 || string(reply[:8]) != "VERSION " {
		return fmt.Errorf("%w: %q", memcache.ErrBadReply, reply)
	}
	return nil
}

// flush empties the server, on a fresh connection: a copy of a pool with
// replicas that was marked down missed the writes and deletes made
// meanwhile, and must not serve what it held before.
func (b *backend) flush(ctx context.Context, timeout time.Duration) error {
	reply, err := b.ask(ctx, timeout, "flush_all\r\n", memcache.CmdFlushAll)
	if err != nil {
		return err
	}
	if string(reply) != "OK\r\n" {
		return fmt.Errorf("%w to flush_all: %q", memcache.ErrBadReply, reply)
	}
	return nil
}

// ask sends one request on a fresh connection and reads its reply.
func (b *backend) ask(ctx context.Context, timeout time.Duration, req string, cmd memcache.Command) ([]byte, error) {
	d := net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(ctx, network(b.addr), b.addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	if _, err := conn.Write([]byte(req)); err != nil {
		return nil, err
	}
	reply, _, err := memcache.NewReplyReader(conn, 0).Read(nil, cmd, nil)
	return reply, err
}
