package proxy

import (
	"errors"
	"time"
)

// healthChanged is called when b goes down or comes back.
func (p *pool) healthChanged(b *backend, up bool, cause error) {
	if up {
		p.log.Info("server restored", "server", b.name(), "addr", b.addr)
	} else {
		p.log.Warn("server down", "server", b.name(), "addr", b.addr, "policy", p.cfg.Ejection, "cause", cause)
	}
	if p.cfg.Ejection == EjectRehash {
		if err := p.rebuild(up); err != nil {
			p.log.Error("placement rebuild failed", "err", err)
		}
	}
}

// restore brings b back. What it missed while it was out is settled first
// (see outage). If that fails, b stays down: with probes, until the next
// probe; without, it is ejected again for server_retry_timeout, as
// nutcracker ejects a server again at its first failed request - unless
// another pool's return was settling it (errSettling): b answered, and
// is tried again at the next check.
func (p *pool) restore(b *backend) {
	o := b.outage.Load()
	if o == nil {
		p.restoreChange(b.restore)
		return
	}
	if err := p.settleReturn(b, o); err != nil {
		if errors.Is(err, errSettling) || errors.Is(err, errLate) {
			p.log.Debug("server not restored yet", "server", b.name(), "addr", b.addr, "err", err)
			return
		}
		if ok, held := b.failLog.allow(); ok {
			p.log.Warn("server not restored: settling what it missed while it was out failed", "server", b.name(), "addr", b.addr,
				"err", err, "lines_not_logged", held)
		}
		if p.cfg.HealthCheck.Interval < 0 {
			b.health.retryAfter(p.cfg.ServerRetryTimeout)
			b.stats.ejected()
		}
	}
}

// healthLoop restores down servers: with probes, when a probe succeeds;
// without, when their retry time has come (twemproxy's behaviour). It
// probes failing servers not marked down too (see probeFailing).
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
	for _, b := range p.backends {
		if b.checkNow && b.health.isDown() {
			p.check(b)
		}
	}
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-t.C:
		}
		for _, b := range p.backends {
			if b.health.isDown() {
				p.check(b)
			} else {
				p.probeFailing(b)
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
	if err := p.front.probe(p.ctx, b); err != nil {
		p.log.Debug("probe failed", "server", b.addr, "err", err)
		return
	}
	p.restore(b)
}
