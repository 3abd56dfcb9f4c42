package proxy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/proxy/internal/pace"
)

// A store's move. In a store (see Store), a change of placement moves the
// data of every key whose owner changes, and loses none of it: no
// acknowledged write is lost, no deleted key comes back, a key's TTL goes
// with it, and every key is at every moment in one place that a read
// finds.
//
// The unit of a move is Redis's MIGRATE, run by the key's old server: it
// sends the key to the new one, with its TTL, and deletes it, as one step
// on the old server, which runs no other command meanwhile; a key it does
// not hold it answers NOKEY. So the rule for a key whose owner changed is
// simple and needs no lock shared by the proxies that serve the pool:
// before a request for it goes to its new server, MIGRATE it there from
// each server that held it under the placements the move follows. Once any
// proxy has done so the key is on its new server, and every later MIGRATE
// of it answers NOKEY; two proxies moving one key at once are two MIGRATEs
// on one server, one after the other. A mover goes through the old servers
// (SCAN) for the keys no request asked for, and the move ends when it has
// been through all of them: no key is left where the placement does not
// put it.
//
// What the rule needs is that no request writes a moving key to its old
// server once the move has begun, which would bring it back there. So a
// move opens - keys move, by request or by the mover - only when nothing
// routes by an older placement: the pool this one replaced has answered
// its requests in flight, no request given up on at its timeout can still
// run on its server (its connection is open: see drainLate) - it would
// bring its key back to a server the key left, where the placements the
// move follows still put it, and the mover would take that copy over the
// key's value (TestStoreMoveWaitsForALateWrite) - and every proxy of
// kolco.admin_peers places by this placement and has no such request
// either (as the sweep waits for them). Until then a request for a
// moving key waits, up to the pool's timeout, and gets -TRYAGAIN if the
// move is still closed; requests for other keys go on as ever.
//
// A change that comes before a move ends extends it: the new move follows
// the placements of the old one and the one it replaces, newest first, and
// moves keys from wherever they are to where the newest placement puts
// them. The placements a move follows are written to the state file before
// the new placement serves, so that a proxy restarted, killed or handed
// over mid-move goes on with it (the mover starts again from the start of
// each server; keys already moved are no longer there).
//
// MIGRATE needs the servers to reach each other at the addresses the pool
// names, and the new server's password (redis_auth, or its entry in
// redis_server_auth) when it asks for one. When a MIGRATE fails the key
// stays on its old server, which is the only one a read finds: the
// request gets -TRYAGAIN, the mover backs off and retries, and the status
// says why; nothing is written until it succeeds.

// storeMove is the move of a store's keys that follows a change.
type storeMove struct {
	// priors are the placements the move follows, newest first: a
	// moving key is on its server under one of them, or on the one the
	// placement puts it on.
	priors []*prior
	// open is closed when keys may move (see above).
	open     chan struct{}
	openOnce sync.Once
	// done is set when the mover has been through every old server.
	done atomic.Bool
	// paused is set by an operator: the mover waits (requests still move
	// their keys). It holds through a change that extends the move, and
	// the state file keeps it.
	paused atomic.Bool
	began  time.Time
	stats  moveStats
	// steady is the clients' p99 before the move, since the last one
	// ended; window paces the mover from their p99 meanwhile (see
	// runMover), once it runs.
	steady time.Duration
	window atomic.Pointer[pace.Window]
	// instances are the processes the move's servers ran when its mover
	// first began, and restarted those that ran another once it ended;
	// the move loop's alone.
	instances map[string]serverInstance
	restarted []RestartedServer
}

// errMoveClosed is the error of a request for a moving key while the move
// is not open yet: the client may try again.
var errMoveClosed = errors.New("the key is moving to another server, and the move waits for every proxy to place by the new placement: try again")

// isOpen reports whether keys may move.
func (m *storeMove) isOpen() bool {
	select {
	case <-m.open:
		return true
	default:
		return false
	}
}

// wait waits until keys may move, up to deadline.
func (m *storeMove) wait(deadline time.Time) error {
	if m.isOpen() {
		return nil
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-m.open:
		return nil
	case <-t.C:
		return errMoveClosed
	}
}

// sources appends to dst the servers key may be on other than n, its
// server now: its servers under the move's placements, each once, but
// those the mover has been through, and those a MIGRATE took key off
// already (see goneKeys). Such a server does not hold the key: SCAN
// lists every key present for the whole listing, the mover moved each,
// and since the move opened no request writes a moving key to its old
// server.
func (m *storeMove) sources(dst []*backend, key []byte, n *backend, sc *routeScratch) []*backend {
	for _, v := range m.priors {
		if o := v.owner(key, sc); o != nil && o.addr != n.addr && !slices.ContainsFunc(dst, func(b *backend) bool { return b.addr == o.addr }) &&
			!m.sourceDone(o.addr) && !m.goneFrom(o.addr, key) {
			dst = append(dst, o)
		}
	}
	return dst
}

// placedOn reports whether one of the placements the move follows puts
// key on src. A key src holds that none puts there was written there
// late: a request the proxy gave up on at its timeout, held on the link
// and run by the server after the key had moved away. It is older than
// the key's value where the key is, and a MIGRATE ... REPLACE of it would
// copy it over that value (the fault schedule's seed 344;
// TestStoreMoveLeavesALateWriteAlone: 41 of 200 keys read the late
// write's value), so the mover leaves it where no request reads it.
func (m *storeMove) placedOn(key []byte, src *backend, sc *routeScratch) bool {
	for _, v := range m.priors {
		if o := v.owner(key, sc); o != nil && o.addr == src.addr {
			return true
		}
	}
	return false
}

// moveAfter returns the move of pl, the placement of a store that
// replaces prev: over prev when the change moved keys, and over the
// placements of prev's move when it had not ended; nil when no key is
// anywhere but where pl puts it. The caller holds placeMu.
func (p *pool) moveAfter(prev, pl *placement) *storeMove {
	if !p.cfg.Store.Enabled || prev == nil {
		return nil
	}
	var priors []*prior
	add := func(v *prior) {
		if v.pl.sig != pl.sig && !slices.ContainsFunc(priors, func(w *prior) bool { return w.pl.sig == v.pl.sig }) {
			priors = append(priors, v)
		}
	}
	add(p.byShard(p.priorOf(prev)))
	if old := prev.move; old != nil && !old.done.Load() {
		for _, v := range p.remapPriors(old.priors) {
			add(p.byShard(v))
		}
	}
	if len(priors) == 0 {
		return nil
	}
	m := &storeMove{priors: priors, open: make(chan struct{}), began: time.Now(), steady: p.steadyP99()}
	// An operator's pause holds through a change that extends the move.
	m.paused.Store(prev.move != nil && !prev.move.done.Load() && prev.move.paused.Load())
	return m
}

// steadyP99 returns the clients' p99 of the last ten seconds without a
// move, or, with fewer than steadySamples requests in them, since the
// pool's last move ended (or the proxy started).
func (p *pool) steadyP99() time.Duration {
	st := p.mig.stats
	now := st.clientLatency.Snapshot()
	if c, ok := st.recentLatency.Since(now); ok && c.Total() >= steadySamples {
		return c.Quantile(0.99)
	}
	if base := st.sinceMove.Load(); base != nil {
		now = now.Sub(*base)
	}
	return now.Quantile(0.99)
}

// steadySamples is the fewest requests whose p99 is more than their
// slowest one or two.
const steadySamples = 200

// byShard returns v with each server taken by name, in a pool on Sentinel:
// the server of this pool of the same name stands for it. A failover puts
// a master's name at the address of the replica it promoted, which holds
// the shard's keys, as replication sent them; that is no move, and the old
// primary, down, could not send them anyway. So a change of addresses
// alone makes no move, and a move that follows another change too (a
// shard added at a failover) moves keys from the shards' primaries now.
// In any other pool a server at another address is another server, whose
// keys move, and v is returned as it is.
func (p *pool) byShard(v *prior) *prior {
	if m := p.cfg.Membership; m == nil || m.Sentinel == nil {
		return v
	}
	cp := *v.pl
	cp.servers = make([]*backend, len(v.pl.servers))
	for i, b := range v.pl.servers {
		cp.servers[i] = b
		if c := p.backendNamed(b.name()); c != nil {
			cp.servers[i] = c
		}
	}
	cp.sig = strings.TrimSuffix(v.pl.sig, serversSignature(v.pl.servers)) + serversSignature(cp.servers)
	return &prior{pl: &cp, down: v.down}
}

// movePlacement is a placement a move follows, as the state file records
// it: the settings that decide it, its servers in the order it takes
// them, the algorithm's state for kolco's distributions, and its
// signature, which the placement rebuilt from them must have.
type movePlacement struct {
	distribution, hash, keyHash, hashTag string
	vnodes                               int
	nodes                                []kolco.Node
	state                                []byte
	sig                                  string
}

// movePlacements returns the placements m follows, newest first, as a
// record keeps them.
func (p *pool) movePlacements(m *storeMove) []movePlacement {
	var out []movePlacement
	for _, v := range m.priors {
		mp := movePlacement{distribution: p.cfg.Distribution, hash: p.cfg.Hash, hashTag: p.cfg.HashTag,
			nodes: nodesOf(v.pl.servers), sig: v.pl.sig}
		if l := v.pl.layout(); l != nil {
			mp.distribution, mp.keyHash, mp.vnodes, mp.state = l.settings.Distribution, l.settings.KeyHash, l.settings.VNodes, l.state()
		}
		out = append(out, mp)
	}
	return out
}

// resumeMove publishes the pool's placement with the move the state file
// records, paused when it records the move paused, before the pool
// starts, so that a proxy restarted, killed or handed over mid-move goes
// on with it.
func (p *pool) resumeMove(records []movePlacement, paused bool) error {
	p.placeMu.Lock()
	defer p.placeMu.Unlock()
	cur := p.place.Load()
	var priors []*prior
	for _, ms := range records {
		v, err := p.priorOfRecord(ms)
		if err != nil {
			return err
		}
		if v.pl.sig != cur.sig {
			priors = append(priors, v)
		}
	}
	if len(priors) == 0 {
		return nil
	}
	cp := *cur
	cp.move = &storeMove{priors: priors, open: make(chan struct{}), began: time.Now(), steady: p.steadyP99()}
	cp.move.paused.Store(paused)
	p.publish(&cp)
	p.log.Info("store move resumed from the state file", "placements", len(priors))
	return nil
}

// priorOfRecord rebuilds a placement a move follows from its record.
func (p *pool) priorOfRecord(ms movePlacement) (*prior, error) {
	cfg := *p.cfg
	cfg.Distribution, cfg.Hash, cfg.KeyHash, cfg.HashTag, cfg.VNodes = ms.distribution, ms.hash, ms.keyHash, ms.hashTag, ms.vnodes
	nodes := ms.nodes
	pl := &placement{replicas: 1}
	if isTwemproxy(&cfg) {
		pick, err := newPicker(&cfg, nodes)
		if err != nil {
			return nil, err
		}
		pl.pick = pick
	} else {
		l, err := newLayout(settingsOf(&cfg), nodes, ms.state)
		if err != nil {
			return nil, err
		}
		pl.kolco = newKolcoPicker(&cfg, l)
		pl.pick, nodes = pl.kolco, l.nodes
	}
	pl.servers = make([]*backend, len(nodes))
	for i, n := range nodes {
		pl.servers[i] = p.backendFor(&backend{node: n, addr: n.Addr})
	}
	if pl.sig = signature(&cfg, pl); pl.sig != ms.sig {
		return nil, fmt.Errorf("a placement rebuilds to signature %q where the file records %q", pl.sig, ms.sig)
	}
	return &prior{pl: pl, down: make([]bool, len(nodes))}, nil
}

// moveLoop opens the pool's move and runs its mover, for each move
// published, until the pool closes or is replaced.
func (p *pool) moveLoop() {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		m := p.place.Load().move
		if m == nil || m.done.Load() {
			select {
			case <-p.moveCtx.Done():
				return
			case <-p.moveChanged:
			case <-tick.C:
				// The clients' latency of the last seconds, without a
				// move: the steady p99 the next move is paced against.
				st := p.mig.stats
				st.recentLatency.Tick(st.clientLatency.Snapshot())
			}
			continue
		}
		if !p.openMove(m) {
			if p.moveCtx.Err() != nil {
				return
			}
			continue // the placement changed: look again
		}
		if p.runMover(m) {
			p.endMove(m)
		} else if p.moveCtx.Err() != nil {
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

// openMove waits until nothing routes by an older placement (see above)
// and opens m. It returns false when the pool closes or m is replaced.
func (p *pool) openMove(m *storeMove) bool {
	if drained := p.predecessorDrained; drained != nil {
		why := "the pool this one replaced answers its requests in flight"
		m.stats.waiting.Store(&why)
		select {
		case <-drained:
		case <-p.moveCtx.Done():
			return false
		}
	}
	wait := moveRetry
	for {
		msg, reason, why := "store move waits: requests given up on at their timeout may still run on their servers", "late",
			fmt.Sprintf("this proxy: %d connections with a request given up on are still open", p.lateWrites.Load())
		if p.lateWrites.Load() == 0 {
			if p.fleet == nil {
				break
			}
			msg = "store move waits: a proxy of kolco.admin_peers does not place as this one yet"
			reason, why = p.fleet.check(p.moveCtx, p)
			if p.moveCtx.Err() != nil {
				return false
			}
			if reason == "" {
				break
			}
		}
		line := reason + ": " + why
		m.stats.waiting.Store(&line)
		if ok, held := p.moveLog.allow(); ok {
			p.log.Warn(msg, "reason", reason, "proxies", why, "retry", wait, "not_logged", held)
		}
		t := time.NewTimer(wait)
		select {
		case <-p.moveCtx.Done():
			t.Stop()
			return false
		case <-p.moveChanged:
			t.Stop()
		case <-t.C:
		}
		if p.place.Load().move != m {
			return false
		}
		wait = min(2*wait, moveRetryMax)
	}
	m.stats.waiting.Store(nil)
	m.stats.opened.CompareAndSwap(0, time.Now().UnixNano())
	m.openOnce.Do(func() { close(m.open) })
	p.log.Info("store move open: keys move to their new servers", "placements", len(m.priors))
	return true
}

// endMove publishes the pool's placement without m, whose keys are all
// where the placement puts them, and records it in the state file.
func (p *pool) endMove(m *storeMove) {
	m.done.Store(true)
	p.placeMu.Lock()
	if cur := p.place.Load(); cur.move == m {
		cp := *cur
		cp.move = nil
		p.place.Store(&cp)
	}
	p.placeMu.Unlock()
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
	ms := p.mig.stats
	ms.lastMove.Store(sum)
	base := ms.clientLatency.Snapshot()
	ms.sinceMove.Store(&base)
	ms.recentLatency.Reset()
	args := []any{"moved", st.moved.Load(),
		"moved_by_requests", st.onRequest.Load(), "scanned", st.scanned.Load(), "took", sum.took.Round(time.Millisecond),
		"predicted", sum.predicted.Round(time.Millisecond), "server_keys_per_second", int64(sum.serverRate),
		"p99_steady", sum.steady, "p99_peak", sum.peak, "p99_bound", sum.bound}
	if len(m.restarted) == 0 {
		p.log.Info("store move done: every key is on the server the placement names", args...)
	}
	for _, rs := range m.restarted {
		p.log.Error("store move done, but a server started again while keys moved: the keys it held, or that moved to it, before it did are gone with it, unless it kept them on disk",
			append([]any{"server", rs.Addr, "held_when_the_move_began", rs.Held, "holds_now", rs.Holds}, args...)...)
	}
	if p.onStateChange != nil {
		p.onStateChange()
	}
}

// haltMove stops the pool's mover for good: a reload calls it before a
// new pool serves, whose move supersedes this one's.
func (p *pool) haltMove() {
	if p.moveStop != nil {
		p.moveStop()
	}
}

// startMove starts the pool's move loop; it stops with the pool's context.
func (p *pool) startMove() {
	p.moveChanged = make(chan struct{}, 1)
	p.moveCtx, p.moveStop = context.WithCancel(p.ctx)
	if !p.cfg.Store.Enabled {
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.moveLoop()
	}()
}
