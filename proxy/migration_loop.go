package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kolco-dev/kolco"
)

// migrations is a pool's windows: the migrations that follow its changes
// of placement (see migration), the loop that closes their windows and
// has the front sweep after them, and what they keep beside the placement.
// It is made with what it needs of its pool (newMigrations) - the pool's
// name, configuration, log and servers, its front's rules for its changes
// (front.changes: the engine reads no protocol's setting of them), its
// placement with the lock of that placement's writers, a way to make a
// backend of the pool for a server it no longer has, its front's sweep
// and a way to ask its fleet - and reads nothing else of it. The last
// three are func values that hold the pool: a backend belongs to its pool
// (backend.pool), the front's sweep is made for the pool (front.sweeper),
// and the fleet is asked about the pool (fleetCheck.check); none reads
// the pool's fields here.
type migrations struct {
	name string
	cfg  *PoolConfig
	log  *slog.Logger
	// backends are the pool's servers, fixed for its life.
	backends []*backend
	// rules are the front's for the pool's changes (front.changes).
	rules changeRules
	// place is the pool's placement; placeMu, its placing's (placing.mu),
	// serializes its writers.
	place   *atomic.Pointer[placement]
	placeMu *sync.Mutex
	// newFormer makes a backend of the pool for a server it no longer has.
	newFormer func(kolco.Node) *backend
	// sweep runs the front's sweep once m's window has closed; it
	// settles m or leaves it to the loop (see front.sweeper). Nil when
	// the front does not sweep: m is then settled at once.
	sweep func(m *migration)
	// fleet returns how to ask the pool's other proxies whether they
	// place its keys as this one does (see placementAgreed), nil for a
	// pool that has none to ask: the server gives the pool its fleet once
	// the pool is made (pool.fleet).
	fleet func() func(ctx context.Context) (reason, why string)
	// deferLog limits the lines of deferred sweeps.
	deferLog logLimit
	// replaced are the drained channels (inFlight) of the pools this one
	// replaced, set before it starts (pool.inherit): the sweep waits for
	// them (see replacedAnswered).
	replaced []<-chan struct{}
	// ctx is the pool's, given at start: the loop stops with it.
	ctx context.Context

	// formers are backends of servers the pool no longer has, made for
	// the priors of its migrations; placeMu guards the slice. watched is
	// a copy of it for the pool's watchdog, which takes no lock.
	formers []*backend
	watched atomic.Pointer[[]*backend]
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
}

// newMigrations returns the windows of p, made before its first
// placement is published: what they read of p is fixed by then.
func newMigrations(p *pool) *migrations {
	var r changeRules
	r.depth, r.window, r.quiet, r.sweep = p.front.changes(p.cfg)
	return &migrations{name: p.name, cfg: p.cfg, log: p.log, backends: p.backends, rules: r, place: &p.place, placeMu: &p.placing.mu,
		newFormer: func(n kolco.Node) *backend { return newBackend(p, n) },
		sweep:     p.front.sweeper(p),
		fleet: func() func(context.Context) (string, string) {
			if p.fleet == nil {
				return nil
			}
			return func(ctx context.Context) (string, string) { return p.fleet.check(ctx, p) }
		},
		stripes: new(stripes), stats: p.met.migFor(p.name)}
}

// publish stores pl as the pool's placement, between two batches of a
// sweep's deletes, and wakes the loop. The caller holds placeMu.
func (ms *migrations) publish(pl *placement) {
	ms.sweepMu.Lock()
	ms.place.Store(pl)
	ms.sweepMu.Unlock()
	ms.stats.windowOpen.Set(b2f(pl.mig != nil && pl.mig.open()))
	if pl.mig != nil {
		ms.stats.views.Set(float64(len(pl.mig.priors)))
	}
	select {
	case ms.changed <- struct{}{}:
	default: // the loop is awake already, or not started
	}
}

// start starts the loop that closes windows and sweeps, under wg; it
// stops when ctx, the pool's, ends.
func (ms *migrations) start(ctx context.Context, wg *sync.WaitGroup) {
	ms.ctx = ctx
	ms.changed = make(chan struct{}, 1)
	ms.sweepCtx, ms.sweepStop = context.WithCancel(ctx)
	wg.Add(1)
	go func() {
		defer wg.Done()
		ms.loop()
	}()
}

// haltSweep stops the sweep for good and waits for the batch of deletes
// under way, if any: a reload calls it on the pool it replaces before the
// new pool serves, whose placement the old pool's sweep does not know.
func (ms *migrations) haltSweep() {
	if ms.sweepStop == nil {
		return // never started
	}
	ms.sweepStop()
	ms.sweepMu.Lock() // waits for the batch under way
	ms.sweepMu.Unlock()
}

// loop closes the window of the pool's migration when its time is up or
// fallbacks stop finding data, then sweeps, until the pool closes.
func (ms *migrations) loop() {
	for {
		m := ms.place.Load().mig
		switch {
		case m == nil || m.state.Load() == migSettled:
			select {
			case <-ms.ctx.Done():
				return
			case <-ms.changed:
			}
		case m.state.Load() == migOpen:
			if !ms.waitWindow(m) {
				return
			}
		default:
			if ms.sweep != nil {
				ms.sweep(m)
			} else {
				ms.settle(m) // nothing to sweep
			}
			if ms.sweepCtx.Err() != nil {
				<-ms.ctx.Done() // halted for good: nothing left to do until the pool closes
				return
			}
		}
	}
}

// waitWindow waits for m's window to end and closes it; it returns early
// when a placement is published (m may be replaced) and false when the
// pool closes.
func (ms *migrations) waitWindow(m *migration) bool {
	t := time.NewTimer(time.Until(m.ends))
	defer t.Stop()
	var reason string
	select {
	case <-ms.ctx.Done():
		return false
	case <-ms.changed:
		return true
	case <-t.C:
		reason = "time"
	case <-m.quietCh:
		reason = "quiet"
	}
	ms.closeWindow(m, reason)
	return true
}

// closeWindow ends m's window: no request falls back from now on, and no
// fallback copy is under way when it returns. The former servers are let
// go; with a sweep due it runs next, else the migration is settled.
func (ms *migrations) closeWindow(m *migration, reason string) {
	next := migSettled
	if m.sweep {
		next = migSweep
	}
	m.end(next)
	st := ms.stats
	st.windowOpen.Set(0)
	st.closed.WithLabelValues(reason).Inc()
	ms.log.Info("migration window closed", "reason", reason, "fallbacks", st.fallbacks.Load(), "hits", st.hits.Load(),
		"copies", st.copies.Load())
	ms.closeFormers()
	if next == migSettled {
		ms.settle(m)
	}
}

// settle publishes the pool's placement without m, once nothing is left
// to do for it, so that requests route by the placement alone.
func (ms *migrations) settle(m *migration) {
	m.state.Store(migSettled)
	ms.placeMu.Lock()
	defer ms.placeMu.Unlock()
	if cur := ms.place.Load(); cur.mig == m {
		cp := *cur
		cp.mig = nil
		ms.place.Store(&cp)
	}
}

// followReturn reports whether a server's return under rehash is
// followed by a migration (see placing.restoreChange).
func (ms *migrations) followReturn() bool {
	cfg := ms.cfg
	return !isTwemproxy(cfg) && cfg.Ejection == EjectRehash && cfg.Replicas <= 1 && (ms.rules.depth > 0 || ms.rules.sweep)
}

// closeFormers closes the former servers' connections, when a window
// closes and when the pool closes.
func (ms *migrations) closeFormers() {
	ms.placeMu.Lock()
	formers := ms.formers
	ms.placeMu.Unlock()
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
