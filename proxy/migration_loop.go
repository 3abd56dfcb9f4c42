package proxy

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// migrations is a pool's state for its migrations beside the placement's.
type migrations struct {
	// formers are backends of servers the pool no longer has, made for
	// the priors of its migrations; placeMu guards the slice.
	formers []*backend
	// stripes order fallback copies with the writes and deletes of the
	// same keys; a pool that replaces another shares its stripes.
	stripes *stripes
	// changed wakes the loop when a placement is published.
	changed chan struct{}
	// sweepMu is held for reading by a sweep while it deletes a batch,
	// and for writing by a change while it publishes, so that no delete
	// is judged by one placement and made under the next.
	sweepMu   sync.RWMutex
	sweepCtx  context.Context
	sweepStop context.CancelFunc
	stats     *migStats
	// clean are the addresses of the servers swept since the last change
	// that moved keys: they hold no orphaned copy (see pool.presweep).
	// A pool that replaces another without moving a key keeps them; at a
	// start none is known. Guarded by sweepMu.
	clean map[string]bool
}

// initMigrations prepares the pool's migration state; it is called
// before the first placement is published.
func (p *pool) initMigrations() {
	p.mig.stripes = new(stripes)
	p.mig.stats = p.met.migFor(p.name)
}

// publish stores pl as the pool's placement and wakes the loop. The
// caller holds placeMu.
func (p *pool) publish(pl *placement) {
	p.mig.sweepMu.Lock()
	p.place.Store(pl)
	p.mig.sweepMu.Unlock()
	p.mig.stats.windowOpen.Set(b2f(pl.mig != nil && pl.mig.open()))
	if pl.mig != nil {
		p.mig.stats.views.Set(float64(len(pl.mig.priors)))
	}
	select {
	case p.mig.changed <- struct{}{}:
	default: // the loop is awake already, or not started
	}
	select {
	case p.mover.changed <- struct{}{}:
	default:
	}
}

// startMigrations starts the loop that closes windows and sweeps; it
// stops with the pool's context.
func (p *pool) startMigrations() {
	p.mig.changed = make(chan struct{}, 1)
	p.mig.sweepCtx, p.mig.sweepStop = context.WithCancel(p.ctx)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.migrateLoop()
	}()
}

// haltSweep stops the pool's sweep for good and waits for the batch of
// deletes under way, if any: a reload calls it before a new pool serves,
// whose placement the old pool's sweep does not know.
func (p *pool) haltSweep() {
	if p.mig.sweepStop == nil {
		return // never started
	}
	p.mig.sweepStop()
	p.mig.sweepMu.Lock() // waits for the batch under way
	p.mig.sweepMu.Unlock()
}

// migrateLoop closes the window of the pool's migration when its time is
// up or fallbacks stop finding data, then sweeps, until the pool closes.
func (p *pool) migrateLoop() {
	for {
		m := p.place.Load().mig
		switch {
		case m == nil || m.state.Load() == migSettled:
			select {
			case <-p.ctx.Done():
				return
			case <-p.mig.changed:
			}
		case m.state.Load() == migOpen:
			if !p.waitWindow(m) {
				return
			}
		default:
			p.front.sweep(p, m)
			if p.mig.sweepCtx.Err() != nil {
				<-p.ctx.Done() // halted for good: nothing left to do until the pool closes
				return
			}
		}
	}
}

// waitWindow waits for m's window to end and closes it; it returns early
// when a placement is published (m may be replaced) and false when the
// pool closes.
func (p *pool) waitWindow(m *migration) bool {
	t := time.NewTimer(time.Until(m.ends))
	defer t.Stop()
	var reason string
	select {
	case <-p.ctx.Done():
		return false
	case <-p.mig.changed:
		return true
	case <-t.C:
		reason = "time"
	case <-m.quietCh:
		reason = "quiet"
	}
	p.closeWindow(m, reason)
	return true
}

// closeWindow ends m's window: no request falls back from now on, and no
// fallback copy is under way when it returns. The former servers are let
// go; with a sweep due it runs next, else the migration is settled.
func (p *pool) closeWindow(m *migration, reason string) {
	next := migSettled
	if m.sweep {
		next = migSweep
	}
	m.end(next)
	st := p.mig.stats
	st.windowOpen.Set(0)
	st.closed.WithLabelValues(reason).Inc()
	p.log.Info("migration window closed", "reason", reason, "fallbacks", st.fallbacks.Load(), "hits", st.hits.Load(),
		"copies", st.copies.Load())
	p.placeMu.Lock()
	formers := p.mig.formers
	p.placeMu.Unlock()
	for _, b := range formers {
		b.close()
	}
	if next == migSettled {
		p.settle(m)
	}
}

// settle publishes the pool's placement without m, once nothing is left
// to do for it, so that requests route by the placement alone.
func (p *pool) settle(m *migration) {
	m.state.Store(migSettled)
	p.placeMu.Lock()
	defer p.placeMu.Unlock()
	if cur := p.place.Load(); cur.mig == m {
		cp := *cur
		cp.mig = nil
		p.place.Store(&cp)
	}
}

// restoreChange restores a server with restore and, for a pool of a
// kolco distribution under rehash, starts the sweep of its keys' copies
// left on the servers that stood in for it, judged by the placement with
// it up. twemproxy's distributions start theirs in the rebuild.
//
// No window reads the stand-ins on the server's misses, as a change's
// does its previous servers: what the server missed is settled before it
// serves (see outage), and any other copy a stand-in holds of its keys is
// one no write of the outage vouched for - a copy a change left behind,
// older than the key's last write, which a server started again empty,
// or one that evicted the key, would have read back and copied
// (TestReturnWindowReadsNoLeftBehindCopy). A change's window still open
// goes on.
func (p *pool) restoreChange(restore func()) {
	cfg := p.cfg
	restore()
	if isTwemproxy(cfg) || cfg.Ejection != EjectRehash || cfg.Replicas > 1 || !cfg.Warm.on() && len(cfg.Sweep.Exclusive) == 0 {
		return
	}
	p.placeMu.Lock()
	cur := p.place.Load()
	cp := *cur
	cp.mig = p.migrationAfter(cur, &cp, true, false)
	p.publish(&cp)
	p.placeMu.Unlock()
}

// closeFormers closes the former servers' connections, when the pool
// closes.
func (p *pool) closeFormers() {
	p.placeMu.Lock()
	formers := p.mig.formers
	p.placeMu.Unlock()
	for _, b := range formers {
		b.close()
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// emptyAdded empties, with flush_all, each server of the pool marked
// exclusive that old, the pool it replaces, did not have, before it takes
// keys: a server that served the pool before and left holds the values of
// then, older than the writes made since elsewhere, and would serve them
// as its own. A new server is empty already, and a shared one cannot be
// emptied. The error names the server that could not be emptied; the
// reload is then refused.
func (p *pool) emptyAdded(ctx context.Context, old *pool) error {
	for _, b := range p.backends {
		if !p.cfg.exclusive(b.node) || b.health.isDown() || slices.ContainsFunc(old.backends, func(o *backend) bool { return o.addr == b.addr }) {
			continue
		}
		if err := p.front.empty(ctx, b); err != nil {
			return fmt.Errorf("pool %s: server %s was added and is marked exclusive (sweep.exclusive): emptying it before it takes keys failed: %w",
				p.name, b.addr, err)
		}
		p.log.Info("added server emptied before it takes keys", "server", b.name(), "addr", b.addr)
	}
	return nil
}
