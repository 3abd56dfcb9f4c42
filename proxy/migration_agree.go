package proxy

import (
	"context"
	"time"
)

// The sweep under a fleet. A pool that follows a membership source is
// usually served by several proxies, each writing keys where its own
// placement puts them. While one of them places by another version of the
// source, a key it writes lands where this proxy sees an orphan, and the
// sweep would delete it. So before it sweeps, the pool asks every proxy of
// kolco.admin_peers for its membership, as the status page does, and
// compares the fingerprints with fleet.Compare: the sweep runs only
// when every peer answers, none differs and none (nor this proxy) may be
// behind its source. Otherwise it is deferred, counted in
// kolco_proxy_sweep_deferred_total{reason}, logged at most once per
// logEvery, and asked again after sweepRetry, doubling up to
// sweepRetryMax, or at once when the pool's placement changes. A pool on
// its configuration's servers list sweeps as before: the configuration is
// the whole truth there.

// sweepRetry and sweepRetryMax bound the wait between two questions to
// the fleet while it disagrees.
const (
	sweepRetry    = time.Second
	sweepRetryMax = 30 * time.Second
)

// fleetCheck asks a pool's fleet whether every proxy places the pool's
// keys as this one does: it returns the reason to defer the sweep
// ("differs", "stale", "unreachable" or "retiring") and what to log, or empty strings
// when it may run. The admin wing's sweepFleet is the one in use; a pool
// without one sweeps as on its configuration's servers.
type fleetCheck interface {
	check(ctx context.Context, p *pool) (reason, why string)
}

// placementAgreed reports whether the sweep of m may run: whether the
// pools this one replaced have answered their requests in flight (see
// replacedAnswered) and the proxies that share the pool's servers place
// keys as this one does (see above). It waits while they do not, and returns false when the sweep is
// stopped, or the placement changed meanwhile: the caller then looks at
// the pool's migration again.
func (ms *migrations) placementAgreed(ctx context.Context, m *migration) bool {
	if !ms.replacedAnswered(ctx) {
		return false
	}
	ask := ms.fleet()
	if ms.cfg.Membership == nil || ask == nil {
		return true
	}
	st := ms.stats
	defer func() {
		st.waiting.Set(0)
		st.deferWhy.Store(nil)
	}()
	wait := sweepRetry
	deferred := false
	for {
		reason, why := ask(ctx)
		if ctx.Err() != nil {
			return false
		}
		if reason == "" {
			if deferred {
				ms.log.Info("sweep: every proxy places as this one now; sweeping")
			}
			return true
		}
		deferred = true
		st.waiting.Set(1)
		line := reason + ": " + why
		st.deferWhy.Store(&line)
		st.deferred.Add(1)
		st.m.deferred.WithLabelValues(ms.name, reason).Inc()
		if ok, held := ms.deferLog.allow(); ok {
			ms.log.Warn("sweep deferred: the proxies of kolco.admin_peers do not all place as this one", "reason", reason, "proxies", why,
				"retry", wait, "deferrals_not_logged", held)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-ms.changed:
			t.Stop()
			return false
		case <-t.C:
		}
		if ms.place.Load().mig != m {
			return false
		}
		wait = min(2*wait, sweepRetryMax)
	}
}

// replacedAnswered reports whether the sweep of the pool may run as far as
// the pools it replaced go: once each has answered its requests in flight.
// A change's pool starts, and its sweep with it, while it is only
// prepared: the running pool serves until the commit, then finishes its
// requests in flight, each routed by the placement before, and a write of
// a key the change takes from a server lands there after the sweep has
// listed it and marked it clean - a copy no presweep then removes, which
// a later change giving the key back serves (the fault schedule's seed
// 2900: replicas, the write made while "add m3" was prepared, read once
// "remove m0" gave the key back, older than a write acknowledged
// meanwhile). It waits, and returns false when ctx ends first: the
// change undone, or the pool replaced in turn.
func (ms *migrations) replacedAnswered(ctx context.Context) bool {
	st := ms.stats
	for _, drained := range ms.replaced {
		select {
		case <-drained:
			continue
		default:
		}
		why := "the pool this one replaces still answers requests routed by the placement before"
		st.deferWhy.Store(&why)
		select {
		case <-drained:
		case <-ctx.Done():
			st.deferWhy.Store(nil)
			return false
		}
		st.deferWhy.Store(nil)
	}
	return true
}

// follow records, before the pool of ms starts, that it replaces the pool
// of old, whose requests in flight are answered once drained is closed:
// its sweep waits for them, and for those of the pools old replaced that
// still have some.
func (ms *migrations) follow(old *migrations, drained <-chan struct{}) {
	for _, d := range old.replaced {
		select {
		case <-d:
		default:
			ms.replaced = append(ms.replaced, d)
		}
	}
	ms.replaced = append(ms.replaced, drained)
}
