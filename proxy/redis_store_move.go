package proxy

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
	// storeMover.run), once it runs.
	steady time.Duration
	window atomic.Pointer[pace.Window]
	// instances are the processes the move's servers ran when its mover
	// first began, and restarted those that ran another once it ended;
	// the move loop's alone.
	instances map[string]serverInstance
	restarted []RestartedServer
}

// moveOf returns the store's move pl carries, or nil.
func moveOf(pl *placement) *storeMove {
	m, _ := pl.move.(*storeMove)
	return m
}

// ended reports whether the mover has been through every old server.
func (m *storeMove) ended() bool { return m.done.Load() }

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

// after returns the move of pl, the placement of a store that replaces
// prev: over prev when the change moved keys, and over the placements of
// prev's move when it had not ended; nil when no key is anywhere but
// where pl puts it. The caller holds placeMu (the placing's lock).
func (mv *storeMover) after(prev, pl *placement) keyMove {
	if !mv.cfg.Store.Enabled || prev == nil {
		return nil
	}
	prevMove := moveOf(prev)
	var priors []*prior
	add := func(v *prior) {
		if v.pl.sig != pl.sig && !slices.ContainsFunc(priors, func(w *prior) bool { return w.pl.sig == v.pl.sig }) {
			priors = append(priors, v)
		}
	}
	add(mv.byShard(mv.priors.priorOf(prev)))
	if old := prevMove; old != nil && !old.done.Load() {
		for _, v := range mv.priors.remapPriors(old.priors) {
			add(mv.byShard(v))
		}
	}
	if len(priors) == 0 {
		return nil
	}
	m := &storeMove{priors: priors, open: make(chan struct{}), began: time.Now(), steady: mv.steadyP99()}
	// An operator's pause holds through a change that extends the move.
	m.paused.Store(prevMove != nil && !prevMove.done.Load() && prevMove.paused.Load())
	return m
}

// steadyP99 returns the clients' p99 of the last ten seconds without a
// move, or, with fewer than steadySamples requests in them, since the
// pool's last move ended (or the proxy started).
func (mv *storeMover) steadyP99() time.Duration {
	st := mv.mig
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
func (mv *storeMover) byShard(v *prior) *prior {
	if m := mv.cfg.Membership; m == nil || m.Sentinel == nil {
		return v
	}
	cp := *v.pl
	cp.servers = make([]*backend, len(v.pl.servers))
	for i, b := range v.pl.servers {
		cp.servers[i] = b
		if c := mv.pool.backendNamed(b.name()); c != nil {
			cp.servers[i] = c
		}
	}
	cp.sig = strings.TrimSuffix(v.pl.sig, serversSignature(v.pl.servers)) + serversSignature(cp.servers)
	return &prior{pl: &cp, down: v.down}
}

// record returns the placements the move under way follows, for the state
// file, and whether an operator paused it; nil when none is under way.
func (mv *storeMover) record() ([]movePlacement, bool) {
	m := moveOf(mv.place.Load())
	if m == nil || m.done.Load() {
		return nil, false
	}
	return mv.placements(m), m.paused.Load()
}

// pause pauses the mover of the move under way, or lets it go on; false
// when none is under way.
func (mv *storeMover) pause(on bool) bool {
	m := moveOf(mv.place.Load())
	if m == nil || m.done.Load() {
		return false
	}
	m.paused.Store(on)
	return true
}

// placements returns the placements m follows, newest first, as a
// record keeps them.
func (mv *storeMover) placements(m *storeMove) []movePlacement {
	var out []movePlacement
	for _, v := range m.priors {
		mp := movePlacement{distribution: mv.cfg.Distribution, hash: mv.cfg.Hash, hashTag: mv.cfg.HashTag,
			nodes: nodesOf(v.pl.servers), sig: v.pl.sig}
		if l := v.pl.layout(); l != nil {
			mp.distribution, mp.keyHash, mp.vnodes, mp.state = l.settings.Distribution, l.settings.KeyHash, l.settings.VNodes, l.state()
		}
		out = append(out, mp)
	}
	return out
}

// resume publishes the pool's placement with the move the state file
// records, paused when it records the move paused, before the pool
// starts, so that a proxy restarted, killed or handed over mid-move goes
// on with it.
func (mv *storeMover) resume(records []movePlacement, paused bool) error {
	mv.placeMu.Lock()
	defer mv.placeMu.Unlock()
	cur := mv.place.Load()
	var priors []*prior
	for _, ms := range records {
		v, err := mv.priorOfRecord(ms)
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
	m := &storeMove{priors: priors, open: make(chan struct{}), began: time.Now(), steady: mv.steadyP99()}
	m.paused.Store(paused)
	cp.move = m
	mv.pool.publish(&cp)
	mv.log.Info("store move resumed from the state file", "placements", len(priors))
	return nil
}

// priorOfRecord rebuilds a placement a move follows from its record.
func (mv *storeMover) priorOfRecord(ms movePlacement) (*prior, error) {
	cfg := *mv.cfg
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
		pl.servers[i] = mv.priors.backendFor(&backend{node: n, addr: n.Addr})
	}
	if pl.sig = signature(&cfg, pl); pl.sig != ms.sig {
		return nil, fmt.Errorf("a placement rebuilds to signature %q where the file records %q", pl.sig, ms.sig)
	}
	return &prior{pl: pl, down: make([]bool, len(nodes))}, nil
}
