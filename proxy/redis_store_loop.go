package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// storeMover is a pool's side of its store's moves (see storeMove): the
// loop that opens each move the pool publishes and runs its mover, and
// what the moves of the pools that replace one another share, the roles
// of their MIGRATEs and their big keys' copies. A pool that is no store
// has one too, whose loop never starts: a reload may make it one, and
// the pools it replaces hand their roles and copies on through it.
//
// It holds what it needs of its pool as fields given when the pool is
// made (newStoreMover), not the pool: its configuration, front, log and
// migration figures. Four are references back, each for one reason: the
// placement and the lock of its writers (place, placeMu: the placing's)
// are the pool's own, which every request reads and a move's end
// writes as any writer does, under the same lock; wg is the pool's goroutines, which the
// pool's close waits for at once, the loop and big keys' copies among
// them; and movePool is the pool seen through the six methods a move
// asks of it (publishing a placement, the state file, its servers for
// the placements a move follows). The fleet's check and the pool's
// moved-keys counter are func values over the pool, read when used: the
// fleet is set, and the counter handed on by a reload, after the pool is
// made, and the fleet's check (fleetCheck) is given the pool it asks
// about. The pool's context is given at start.
type storeMover struct {
	cfg   *PoolConfig
	front front
	log   *slog.Logger
	// mig holds the clients' latency the mover paces itself by, and the
	// summary of the last move.
	mig     *migStats
	place   *atomic.Pointer[placement]
	placeMu *sync.Mutex
	pool    movePool
	priors  priorSource
	// askFleet asks the pool's fleet whether every proxy places as this
	// one (see fleetCheck): empty strings when the move may open; ok is
	// false when the pool has no fleet. counted adds keys moved to the
	// pool's figures, which a reload hands on after the pool is made.
	askFleet func(ctx context.Context) (reason, why string, ok bool)
	counted  func(n int64)
	// late returns the connections of the pool, and of the pools it
	// replaced, still open with a request given up on at its timeout (see
	// pool.lateWrites, which a reload hands on after the pool is made).
	late func() int64
	// roles keeps the MIGRATEs of the pool, and of the pools it replaced,
	// from waiting on each other; copies are the big keys they copy
	// piece by piece (see keyCopies).
	roles  *migrateRoles
	copies *keyCopies
	// args are a request's MIGRATE arguments to each new server, by
	// its backend (see argsTo).
	args sync.Map
	// downAfter, for a pool on Sentinels, returns how long they let a
	// master's primary be silent before they fail it over; lowered holds,
	// by master, the timeout last logged as lowered to keep under it (see
	// migrateTimeout).
	downAfter func(master string) time.Duration
	lowered   sync.Map

	// predecessorDrained is closed when the pool this one replaced has
	// answered its requests in flight, which a move waits for (the
	// channel, not the pool, so that a chain of reloads does not hold
	// every pool it replaced).
	predecessorDrained <-chan struct{}
	// ctx and wg are the pool's (ctx set by start): big keys' copies run
	// under ctx, and the pool's close waits for them and the loop with
	// wg. The loop runs under moveCtx, which stop ends, woken by changed;
	// moveLog limits its lines.
	ctx     context.Context
	wg      *sync.WaitGroup
	moveCtx context.Context
	stop    context.CancelFunc
	changed chan struct{}
	moveLog logLimit
}

// movePool is what a store's move asks of its pool beside the fields it
// is given (see storeMover).
type movePool interface {
	// publish stores a placement and wakes the pool's loops; the caller
	// holds placeMu.
	publish(pl *placement)
	// stateChanged has the state file written again.
	stateChanged()
	backendNamed(name string) *backend
}

// priorSource gives the pool's servers for the placements a move follows
// (see migrations.priorOf): the pool's windows.
type priorSource interface {
	priorOf(prev *placement) *prior
	remapPriors(priors []*prior) []*prior
	backendFor(b *backend) *backend
}

// newStoreMover returns the store's mover of p, made with p: it reads p's
// fields once, but for the fleet (set before p starts) and the figures
// (a reload hands the replaced pool's on), read when they are used.
func newStoreMover(p *pool) *storeMover {
	return &storeMover{cfg: p.cfg, front: p.front, log: p.log, mig: p.mig.stats, place: &p.place, placeMu: &p.placing.mu, pool: p.placing, priors: p.mig, wg: &p.wg,
		askFleet: func(ctx context.Context) (string, string, bool) {
			if p.fleet == nil {
				return "", "", false
			}
			reason, why := p.fleet.check(ctx, p)
			return reason, why, true
		},
		counted: func(n int64) { p.stats.storeMoved.Add(n) },
		late:    func() int64 { return p.lateWrites.Load() },
		roles:   newMigrateRoles(), copies: new(keyCopies)}
}

// onSentinels keeps downAfter for migrateTimeout.
func (mv *storeMover) onSentinels(downAfter func(string) time.Duration) { mv.downAfter = downAfter }

// moves makes p's store's mover (see front.moves).
func (redisFront) moves(p *pool) keyMoves { return newStoreMover(p) }

// inherit takes over the MIGRATE roles and big keys' copies of old, the
// mover of the pool that this one's pool replaces, and has the move wait
// for drained, closed once that pool has answered its requests in flight.
func (mv *storeMover) inherit(old keyMoves, drained <-chan struct{}) {
	if o, ok := old.(*storeMover); ok {
		mv.roles, mv.copies = o.roles, o.copies
	}
	mv.predecessorDrained = drained
}

// wake wakes the loop of a store's move after a placement is published
// (see placing.publish).
func (mv *storeMover) wake() {
	select {
	case mv.changed <- struct{}{}:
	default: // the loop is awake already, or not started
	}
}

// loop opens the pool's move and runs its mover, for each move
// published, until the pool closes or is replaced.
func (mv *storeMover) loop() {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		m := moveOf(mv.place.Load())
		if m == nil || m.done.Load() {
			select {
			case <-mv.moveCtx.Done():
				return
			case <-mv.changed:
			case <-tick.C:
				// The clients' latency of the last seconds, without a
				// move: the steady p99 the next move is paced against.
				st := mv.mig
				st.recentLatency.Tick(st.clientLatency.Snapshot())
			}
			continue
		}
		if !mv.open(m) {
			if mv.moveCtx.Err() != nil {
				return
			}
			continue // the placement changed: look again
		}
		if mv.run(m) {
			mv.end(m)
		} else if mv.moveCtx.Err() != nil {
			return
		}
	}
}

// moveRetry and moveRetryMax bound the wait between two questions to the
// fleet before a move opens: short, since requests for moving keys wait
// for it.
const (
	moveRetry    = 50 * time.Millisecond
	moveRetryMax = time.Second
)

// open waits until nothing routes by an older placement (see storeMove)
// and opens m. It returns false when the pool closes or m is replaced.
func (mv *storeMover) open(m *storeMove) bool {
	if drained := mv.predecessorDrained; drained != nil {
		why := "the pool this one replaced answers its requests in flight"
		m.stats.waiting.Store(&why)
		select {
		case <-drained:
		case <-mv.moveCtx.Done():
			return false
		}
	}
	wait := moveRetry
	for {
		msg, reason, why := "store move waits: requests given up on at their timeout may still run on their servers", "late",
			fmt.Sprintf("this proxy: %d connections with a request given up on are still open", mv.late())
		if mv.late() == 0 {
			var ok bool
			msg = "store move waits: a proxy of kolco.admin_peers does not place as this one yet"
			if reason, why, ok = mv.askFleet(mv.moveCtx); !ok {
				break
			}
			if mv.moveCtx.Err() != nil {
				return false
			}
			if reason == "" {
				break
			}
		}
		line := reason + ": " + why
		m.stats.waiting.Store(&line)
		if ok, held := mv.moveLog.allow(); ok {
			mv.log.Warn(msg, "reason", reason, "proxies", why, "retry", wait, "not_logged", held)
		}
		t := time.NewTimer(wait)
		select {
		case <-mv.moveCtx.Done():
			t.Stop()
			return false
		case <-mv.changed:
			t.Stop()
		case <-t.C:
		}
		if moveOf(mv.place.Load()) != m {
			return false
		}
		wait = min(2*wait, moveRetryMax)
	}
	m.stats.waiting.Store(nil)
	m.stats.opened.CompareAndSwap(0, time.Now().UnixNano())
	m.openOnce.Do(func() { close(m.open) })
	mv.log.Info("store move open: keys move to their new servers", "placements", len(m.priors))
	return true
}

// end publishes the pool's placement without m, whose keys are all
// where the placement puts them, and records it in the state file.
func (mv *storeMover) end(m *storeMove) {
	m.done.Store(true)
	mv.placeMu.Lock()
	if cur := mv.place.Load(); moveOf(cur) == m {
		cp := *cur
		cp.move = nil
		mv.place.Store(&cp)
	}
	mv.placeMu.Unlock()
	st := &m.stats
	sum := &moveSummary{ended: time.Now(), keys: st.moved.Load() + st.onRequest.Load(), bytes: st.bytes.Load(), took: time.Since(m.began), steady: m.steady}
	if w := m.window.Load(); w != nil {
		sum.peak, sum.slowed = w.Peak()
		sum.bound = w.Bound()
	}
	sum.predicted = time.Duration(st.predicted.Load())
	sum.restarted = m.restarted
	if opened := st.opened.Load(); opened > 0 {
		busiest := int64(0)
		st.bySource.Range(func(_, v any) bool {
			ss := v.(*sourceStats)
			busiest = max(busiest, ss.moved.Load()+ss.onRequest.Load())
			return true
		})
		sum.moved = sum.ended.Sub(time.Unix(0, opened))
		if secs := sum.moved.Seconds(); secs > 0 {
			sum.serverRate = float64(busiest) / secs
		}
	}
	ms := mv.mig
	ms.lastMove.Store(sum)
	base := ms.clientLatency.Snapshot()
	ms.sinceMove.Store(&base)
	ms.recentLatency.Reset()
	args := []any{"moved", st.moved.Load(),
		"moved_by_requests", st.onRequest.Load(), "scanned", st.scanned.Load(), "took", sum.took.Round(time.Millisecond),
		"predicted", sum.predicted.Round(time.Millisecond), "server_keys_per_second", int64(sum.serverRate),
		"p99_steady", sum.steady, "p99_peak", sum.peak, "p99_bound", sum.bound}
	if len(m.restarted) == 0 {
		mv.log.Info("store move done: every key is on the server the placement names", args...)
	}
	for _, rs := range m.restarted {
		mv.log.Error("store move done, but a server started again while keys moved: the keys it held, or that moved to it, before it did are gone with it, unless it kept them on disk",
			append([]any{"server", rs.Addr, "held_when_the_move_began", rs.Held, "holds_now", rs.Holds}, args...)...)
	}
	mv.pool.stateChanged()
}

// halt stops the pool's mover for good: a reload calls it before a new
// pool serves, whose move supersedes this one's.
func (mv *storeMover) halt() {
	if mv.stop != nil {
		mv.stop()
	}
}

// start starts the move loop under ctx, the pool's; it stops with ctx.
func (mv *storeMover) start(ctx context.Context) {
	mv.ctx = ctx
	mv.changed = make(chan struct{}, 1)
	mv.moveCtx, mv.stop = context.WithCancel(ctx)
	if !mv.cfg.Store.Enabled {
		return
	}
	mv.wg.Add(1)
	go func() {
		defer mv.wg.Done()
		mv.loop()
	}()
}
