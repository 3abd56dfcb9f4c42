package proxy

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// healthChecks mark a pool's servers down and up: it rebuilds the
// placement as a server goes down or comes back (changed), probes the
// down servers and the failing ones (loop), and brings a server back once
// what it missed is settled (restore). It is given what it reads of its
// pool when it is made: the pool's configuration, servers, front and log,
// its outages, and the rebuild of its placing, which publishes the
// placement a server going down leads to (its outages publish a
// return's). Its loop runs under the pool's context, given as the pool
// starts (pool.start).
type healthChecks struct {
	cfg      *PoolConfig
	backends []*backend
	front    prober
	log      *slog.Logger
	outages  *outages
	// rebuild rebuilds twemproxy's placement over the servers up
	// (placing.rebuild).
	rebuild func(up bool) error
}

// prober is what health checks ask of the pool's front (see front).
type prober interface {
	probe(ctx context.Context, b *backend) error
}

// newHealthChecks returns the health checks of a pool of cfg, whose
// servers are backends, and whose front, log and outages are front, log
// and outages; rebuild is the pool's placing's (see healthChecks).
func newHealthChecks(cfg *PoolConfig, backends []*backend, front prober, log *slog.Logger, outages *outages,
	rebuild func(up bool) error) *healthChecks {
	return &healthChecks{cfg: cfg, backends: backends, front: front, log: log, outages: outages,
		rebuild: rebuild}
}

// changed is called when b goes down or comes back.
func (hc *healthChecks) changed(b *backend, up bool, cause error) {
	if up {
		hc.log.Info("server restored", "server", b.name(), "addr", b.addr)
	} else {
		hc.log.Warn("server down", "server", b.name(), "addr", b.addr, "policy", hc.cfg.Ejection, "cause", cause)
	}
	if hc.cfg.Ejection == EjectRehash {
		if err := hc.rebuild(up); err != nil {
			hc.log.Error("placement rebuild failed", "err", err)
		}
	}
}

// restore brings b back. What it missed while it was out is settled first
// (see outage). If that fails, b stays down: with probes, until the next
// probe; without, it is ejected again for server_retry_timeout, as
// nutcracker ejects a server again at its first failed request - unless
// another pool's return was settling it (errSettling): b answered, and
// is tried again at the next check.
func (hc *healthChecks) restore(b *backend) {
	if err := hc.outages.returnOf(b); err != nil {
		if errors.Is(err, errSettling) || errors.Is(err, errLate) {
			hc.log.Debug("server not restored yet", "server", b.name(), "addr", b.addr, "err", err)
			return
		}
		if ok, held := b.failLog.allow(); ok {
			hc.log.Warn("server not restored: settling what it missed while it was out failed", "server", b.name(), "addr", b.addr,
				"err", err, "lines_not_logged", held)
		}
		if hc.cfg.HealthCheck.Interval < 0 {
			b.health.retryAfter(hc.cfg.ServerRetryTimeout)
			b.stats.ejected()
		}
	}
}

// loop restores down servers until ctx, the pool's, is done: with probes,
// when a probe succeeds; without, when their retry time has come
// (twemproxy's behaviour). It probes failing servers not marked down too
// (see probeFailing).
func (hc *healthChecks) loop(ctx context.Context) {
	every := hc.cfg.HealthCheck.Interval
	if every <= 0 {
		// No probes: a down server returns at its retry time. Checked a
		// tenth as often, so that it returns within 10% of it rather than
		// up to a whole period late.
		every = hc.cfg.ServerRetryTimeout / 10
	}
	t := time.NewTicker(max(every, 10*time.Millisecond))
	defer t.Stop()
	// A server repointed while down is checked at once (see
	// pool.inheritRepointed), once the pool serves: only the pool
	// serving settles a return (outages.held).
	for _, b := range hc.backends {
		if b.checkNow && b.health.isDown() && hc.serving(ctx) {
			hc.check(ctx, b)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, b := range hc.backends {
			if b.health.isDown() {
				hc.check(ctx, b)
			} else {
				hc.probeFailing(ctx, b)
			}
		}
	}
}

// check restores the down server b if it is time: when its probe succeeds,
// or, without probes, when its retry time has come.
func (hc *healthChecks) check(ctx context.Context, b *backend) {
	if hc.cfg.HealthCheck.Interval < 0 {
		if time.Now().After(b.health.retryTime()) {
			hc.restore(b)
		}
		return
	}
	if err := hc.front.probe(ctx, b); err != nil {
		hc.log.Debug("probe failed", "server", b.addr, "err", err)
		return
	}
	hc.restore(b)
}

// serving waits until the pool serves (see outages.held): a pool prepared
// by a change is committed once the change is ready. It reports false
// when ctx, the pool's, ends first (a change undone).
func (hc *healthChecks) serving(ctx context.Context) bool {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for hc.outages.held.Load() {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	return true
}
