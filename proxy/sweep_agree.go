package proxy

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
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

// sweepFleet is what a pool's sweep needs of the server to ask its
// fleet, kept lock-free: a sweep must never wait for the server's lock,
// which a reload holds while it closes pools and waits for their sweeps.
type sweepFleet struct {
	peers   atomic.Pointer[[]string]               // kolco.admin_peers
	token   atomic.Pointer[[]byte]                 // the admin token peers are asked with
	sources atomic.Pointer[map[string]*poolSource] // the pools' sources, by name
}

// setPeers records kolco.admin_peers of the configuration in force.
func (f *sweepFleet) setPeers(peers []string) { f.peers.Store(&peers) }

// setSources records the pools' sources; nil once they stop.
func (f *sweepFleet) setSources(m map[string]*poolSource) { f.sources.Store(&m) }

// check asks the fleet whether it places p's keys as p does. It returns
// the reason to defer ("differs", "stale" or "unreachable") and what to
// log, or empty strings when the sweep may run.
func (f *sweepFleet) check(ctx context.Context, p *pool) (reason, why string) {
	var ps *poolSource
	if m := f.sources.Load(); m != nil {
		ps = (*m)[p.name]
	}
	ms := poolEntry{p: p, ps: ps}.membershipStatus()
	var peers []string
	if l := f.peers.Load(); l != nil {
		peers = *l
	}
	var token []byte
	if t := f.token.Load(); t != nil {
		token = *t
	}
	answers := askPeers(ctx, peers, token)
	a := agreement("this proxy", ms, answers)
	switch {
	case len(a.Unreachable) > 0:
		var names []string
		for _, u := range a.Unreachable {
			names = append(names, fmt.Sprintf("%s (%v)", u.Name, u.Err))
		}
		return "unreachable", strings.Join(names, ", ")
	case !a.Agree():
		var names []string
		for _, an := range answers {
			if theirs := an.Pools[p.name]; theirs.Fingerprint != ms.Fingerprint {
				names = append(names, fmt.Sprintf("%s (revision %d, fingerprint %s)", an.Addr, theirs.Revision, theirs.Fingerprint))
			}
		}
		return "differs", fmt.Sprintf("%s, where this proxy places by fingerprint %s", strings.Join(names, ", "), ms.Fingerprint)
	case len(a.Stale) > 0:
		return "stale", strings.Join(a.Stale, ", ") + " may be behind the source"
	}
	return "", ""
}

// placementAgreed reports whether the sweep of m may run: whether the
// proxies that share the pool's servers place keys as this one does (see
// above). It waits while they do not, and returns false when the sweep is
// stopped, or the placement changed meanwhile: the caller then looks at
// the pool's migration again.
func (p *pool) placementAgreed(ctx context.Context, m *migration) bool {
	if p.cfg.Membership == nil || p.fleet == nil {
		return true
	}
	st := p.mig.stats
	defer func() {
		st.waiting.Set(0)
		st.deferWhy.Store(nil)
	}()
	wait := sweepRetry
	deferred := false
	for {
		reason, why := p.fleet.check(ctx, p)
		if ctx.Err() != nil {
			return false
		}
		if reason == "" {
			if deferred {
				p.log.Info("sweep: every proxy places as this one now; sweeping")
			}
			return true
		}
		deferred = true
		st.waiting.Set(1)
		line := reason + ": " + why
		st.deferWhy.Store(&line)
		st.deferred.Add(1)
		st.m.deferred.WithLabelValues(p.name, reason).Inc()
		if ok, held := p.sweepLog.allow(); ok {
			p.log.Warn("sweep deferred: the proxies of kolco.admin_peers do not all place as this one", "reason", reason, "proxies", why,
				"retry", wait, "deferrals_not_logged", held)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-p.mig.changed:
			t.Stop()
			return false
		case <-t.C:
		}
		if p.place.Load().mig != m {
			return false
		}
		wait = min(2*wait, sweepRetryMax)
	}
}
