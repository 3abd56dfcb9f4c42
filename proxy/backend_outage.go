package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// An outage is what a server marked down missed. Under rehash its keys
// are served by stand-ins while it is out, and with replicas by their
// other copies: every write and delete of one of its keys goes elsewhere,
// and its own copy of the key grows older than the one written. So the
// pool notes each such key in the server's outage, a journal opened when
// the server is marked down, and when the server comes back exactly those
// keys are settled before it serves (see healthChecks.restore): its copies of
// them removed, or replaced by the values written meanwhile (its front's
// settle), and the stand-ins' copies removed (clearStandIns), so that it serves
// no value older than one written meanwhile, a second failure finds no
// stand-in's old copy, and nothing else it holds is touched. A pool whose
// down server's keys are not written elsewhere (fail-fast with one copy;
// none, which marks no server down) keeps no journal.
//
// With two servers out at once a server's keys are not the only ones its
// copies of grow old: a server that stood in for another's keys and went
// out itself holds copies of them, and serves them again if it returns
// first. So a key is noted in the outage of every server out that would
// serve it were it up (placement.servesIfUp), and a return settles the
// keys it serves from then on and removes its copies of the others; a
// stand-in's copies that cannot be removed because it is out are noted in
// its own outage, for its return to remove.
//
// Under twemproxy's distributions an ejection places every key afresh
// over the servers up (modula moves most keys, ketama with unequal
// weights some of other servers'), and a return moves them back: a key
// of a server still up written while another is out is noted in that
// one's outage too (placement.movesOnReturn), and its return settles it
// on the server it sends the key back to, whose copy is from before.
//
// A write is noted once it is done, holding the pool's returns lock for
// reading from before it is routed until then, and a return settles the
// last keys under the lock, so that no write routed around the server is
// left out of what it settles: writes wait for those last keys only.

// outage is the journal of one server's outage.
type outage struct {
	began time.Time
	limit int
	// settling is held by the return settling the outage (see
	// outages.settleReturn).
	settling sync.Mutex

	// mu guards the fields below.
	mu sync.Mutex
	// keys are the keys written elsewhere, each with the addresses of the
	// stand-ins it was written to (none with replicas: the other copies
	// are its own).
	keys map[string][]string
	// overflow is set once more than limit keys were written elsewhere,
	// or a write reached every key at once (flush_all): the journal no
	// longer says what the server missed.
	overflow bool
	// fenced are the keys of the server whose copies stand-ins removed
	// before a read (see outage.fence), each with their addresses.
	fenced map[string][]string
	// marked is when the server was marked down and writes began to be
	// routed around it; zero until then (see outage.routedAround).
	marked time.Time
	// changed is set once a change of the placement came while the
	// server was out (see outage.placementChanged).
	changed bool
	// missed are the changes of the placement made while the server was
	// out whose gains its return has yet to sweep (see sweepGained).
	missed changeLog
	// late counts the server's connections with requests the proxy gave
	// up on that are still open (see backend.drainLate).
	late atomic.Int32
}

func newOutage(limit int) *outage {
	return &outage{began: time.Now(), limit: limit, keys: map[string][]string{}}
}

// note records key, written to the stand-in at addr ("" when it went to
// the key's other copies).
func (o *outage) note(key []byte, addr string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.overflow {
		return
	}
	to, ok := o.keys[string(key)]
	if !ok && len(o.keys) >= o.limit {
		o.overflow, o.keys = true, nil
		return
	}
	if addr != "" && !slices.Contains(to, addr) {
		to = append(to, addr)
	}
	if o.changed && !slices.Contains(to, unsureStandIn) {
		to = append(to, unsureStandIn)
	}
	o.keys[string(key)] = to
}

// overflowed reports whether the journal no longer says what the server
// missed.
func (o *outage) overflowed() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.overflow
}

// spill marks the journal overflowed: a write reached every key at once.
func (o *outage) spill() {
	o.mu.Lock()
	o.overflow, o.keys = true, nil
	o.mu.Unlock()
}

// size returns the number of keys noted and not yet taken.
func (o *outage) size() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.keys)
}

// nextKeys removes up to n keys from the journal and returns them, and the
// stand-ins each was written to, into settled.
func (o *outage) nextKeys(n int, settled map[string][]string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var keys []string
	for k, to := range o.keys {
		if len(keys) == n {
			break
		}
		keys = append(keys, k)
		for _, a := range to {
			if !slices.Contains(settled[k], a) {
				settled[k] = append(settled[k], a)
			}
		}
		delete(o.keys, k)
	}
	return keys
}

// putBack returns keys taken from the journal and not settled. A change
// of the placement that came while they were taken marks them unsure as
// it marked the journal (see placementChanged): they were noted under the
// placement before it.
func (o *outage) putBack(keys []string, settled map[string][]string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.overflow {
		return
	}
	for _, k := range keys {
		to := append(o.keys[k], settled[k]...)
		if o.changed && !slices.Contains(to, unsureStandIn) {
			to = append(to, unsureStandIn)
		}
		o.keys[k] = to
	}
}

// settleBatch is how many keys a return settles at a time.
const settleBatch = 512

// errOverflow is why a server whose outage journal overflowed stays down
// when it is not the pool's alone, which could be emptied instead.
var errOverflow = errors.New("its outage journal overflowed (more keys written elsewhere than outage_journal, or flush_all): what it missed is unknown, and it is not marked exclusive (sweep.exclusive), so it is not emptied")

// outages are a pool's servers' outage journals at work: it opens a
// server's journal as the server is marked down, notes in the journals
// the writes routed around their servers, fences the reads at stand-ins
// (fenceReads) and settles a server's return from its journal
// (settleReturn). It is given what it reads of its pool when it is made:
// the pool's configuration, servers, placement, front and log, and the
// placing's restoreChange, which a return publishes its placement by
// (under the placing's lock: a method value, its one way back); and,
// as the pool starts, the pool's context. The journals themselves are the servers' (backend.outage): a pool that
// replaces another takes over those of the servers it inherits down (see
// pool.inherit, share).
type outages struct {
	// keeps says whether the pool keeps outage journals: whether a down
	// server's keys are written elsewhere. Under random no key is any
	// server's: there is nothing a returning server missed of its own.
	// Set from the configuration as the outages are made; a write asks it
	// before it calls into the guard (call.guardWrite), so that in a pool
	// that keeps none (a store's) it runs nothing of the guard.
	keeps bool
	// count is the number of servers with an open journal.
	count atomic.Int32
	// held is set while the pool does not serve: prepared beside the
	// pool it replaces and not committed, or replaced. It settles no
	// return meanwhile (see backend_return_change.go).
	held atomic.Bool
	// returns is held for reading by writes from their routing until they
	// are done (guardWrite, doneWrite), and for writing by a server's
	// return while it settles its last keys (see outage). A pool that
	// replaces another shares its returns (see pool.inherit): the writes
	// in flight in the pool replaced hold off the returns of the new one.
	returns *sync.RWMutex

	pool     string // the pool's name, for rejoinEmptied's error
	cfg      *PoolConfig
	backends []*backend
	place    *atomic.Pointer[placement]
	front    settler
	log      *slog.Logger
	// restoreChange marks a settled server up and publishes the placement
	// it comes back to (placing.restoreChange).
	restoreChange func(restore func())
	// ctx is the pool's, given as it starts (pool.start): the fences and
	// returns' settling stop as it closes.
	ctx context.Context
}

// settler is what outages ask of the pool's front (see front): a
// returning server's copies settled, a stand-in's dropped, an overflowed
// server emptied, the keys a returning server holds listed.
type settler interface {
	settle(ctx context.Context, b, src *backend, keys []string, gate func() (stale func(key string) bool, release func())) error
	dropCopies(ctx context.Context, b *backend, keys []string) error
	empty(ctx context.Context, b *backend) error
	heldKeys(ctx context.Context, b *backend, keep func(key []byte) bool) ([]string, error)
}

// newOutages returns the outages of the pool named pool, of cfg, whose
// servers are backends and placement place, and whose front and log are
// front and log; restoreChange is the pool's (see outages). Its returns
// lock is its own until the pool inherits another's (pool.inherit).
func newOutages(pool string, cfg *PoolConfig, backends []*backend, place *atomic.Pointer[placement], front settler, log *slog.Logger,
	restoreChange func(restore func())) *outages {
	return &outages{returns: new(sync.RWMutex), pool: pool, cfg: cfg, backends: backends, place: place, front: front, log: log,
		restoreChange: restoreChange, keeps: cfg.Distribution != distRandom && (cfg.Ejection == EjectRehash || cfg.Replicas > 1)}
}

// begin opens b's outage journal as b is marked down, before any request
// can be routed around it.
func (out *outages) begin(b *backend) {
	if !out.keeps || b.outage.Load() != nil {
		return
	}
	b.outage.Store(newOutage(out.cfg.OutageJournal))
	out.count.Add(1)
}

// share makes o, the journal of b's server in the pool this one replaces,
// b's too unless b has one already, and reports whether it did: the one
// journal notes what the server misses in both pools, and the pool
// serving settles it (see backend_return_change.go). It is counted at
// once, as the callers share it before b is marked down: nothing routed
// around b goes unnoted. before is the placement of the pool replaced,
// which this one's changes: the journal notes its keys unsure from then
// on (placementChanged), and the return sweeps the keys the change gives
// b (changeLog.span), unless the change moves servers to other addresses
// only (placesAlike: a failover); nil for a server repointed, whose
// journal is moved.
func (out *outages) share(b *backend, o *outage, before *placement) bool {
	if !b.outage.CompareAndSwap(nil, o) {
		return false
	}
	out.count.Add(1)
	if before != nil && !placesAlike(before, out.place.Load()) {
		o.placementChanged()
		o.missed.span(before, out.place.Load())
	}
	return true
}

// guardWrite takes the pool's returns lock for reading for a write about
// to be routed; the caller releases it with doneWrite once the write is
// done. flush writes the client's queued requests, when the lock must be
// waited for: a return waits for the writes holding it, and a write the
// client has queued but not written would never be done.
func (out *outages) guardWrite(flush func()) {
	if out.returns.TryRLock() {
		return
	}
	if flush != nil {
		flush()
	}
	out.returns.RLock()
}

// doneWrite notes the keys of a write that began at since and is done in
// the outages of their down servers, and releases the returns lock
// guardWrite took. lost says that the write failed at a server: it may
// not have reached the stand-in it went to.
func (out *outages) doneWrite(keys [][]byte, since time.Time, lost bool) {
	if out.count.Load() > 0 {
		out.noteWrites(keys, since, lost)
	}
	out.returns.RUnlock()
}

// noteWrites records each key of a write that began at since in the
// outage of each server marked down that would serve it were it up (see
// placement.servesIfUp) - its owner, and a server that stood in for its
// owner while the owner is out too - with the servers the write may have
// reached: the stand-in the key goes to now, or with replicas its other
// copies up, or out since the write began. A write lost at a server is
// noted with the stand-in as unsure (unsureStandIn): it may not have
// reached it, whose own copy may be older.
func (out *outages) noteWrites(keys [][]byte, since time.Time, lost bool) {
	pl := out.place.Load()
	if len(pl.configured().servers) == 0 {
		return
	}
	var sc routeScratch
	for _, key := range keys {
		if pl.replicas > 1 {
			noteCopies(pl, key, since, &sc)
			continue
		}
		to := ""
		var now *backend
		if r := pl.route(key, false, &sc); len(r) > 0 {
			now = r[0]
			to = now.addr
		}
		for _, b := range out.backends {
			o := b.outage.Load()
			if o == nil || !pl.movesOnReturn(key, b, now, &sc) {
				continue
			}
			if to == b.addr { // written to b itself, before it was marked down
				o.note(key, "")
				continue
			}
			o.note(key, to)
			if lost || !o.routedAround(since) {
				o.note(key, unsureStandIn)
			}
		}
	}
}

// noteCopies notes key in the outage of each of its copies marked down,
// with its other copies the write may have reached: those up, and those
// marked down since the write began. None means the write reached no
// copy: nothing newer than what each holds is anywhere.
func noteCopies(pl *placement, key []byte, since time.Time, sc *routeScratch) {
	full := pl.configured()
	sc.idx, sc.nodes = full.copies(sc.idx[:0], sc.nodes, key)
	for _, i := range sc.idx {
		b := full.servers[i]
		o := b.outage.Load()
		if o == nil {
			continue
		}
		o.note(key, "")
		for _, j := range sc.idx {
			c := full.servers[j]
			if c == b {
				continue
			}
			if co := c.outage.Load(); co == nil || !co.began.Before(since) {
				o.note(key, c.addr)
			}
		}
	}
}

// spill marks every open outage overflowed: a write reached every key of
// the pool at once (flush_all broadcast).
func (out *outages) spill() {
	for _, b := range out.backends {
		if o := b.outage.Load(); o != nil {
			o.spill()
		}
	}
}

// errNotOverflowed is the error of a rejoin asked of a server whose
// outage journal says what it missed: it rejoins by itself.
var errNotOverflowed = errors.New("its outage journal says what it missed: it is settled and rejoins by itself once it answers")

// rejoinEmptied drops the overflowed outage journal of the server named
// name, which an operator emptied, so that it rejoins at its next
// successful probe holding nothing older than what the pool serves. The
// error says why it does not: no such server, not down, or a journal that
// has not overflowed.
func (out *outages) rejoinEmptied(name string) error {
	for _, b := range out.backends {
		if b.name() != name {
			continue
		}
		o := b.outage.Load()
		switch {
		case !b.health.isDown() || o == nil:
			return fmt.Errorf("server %q is not down", name)
		case !o.overflowed():
			return errNotOverflowed
		}
		if b.outage.CompareAndSwap(o, nil) {
			out.count.Add(-1)
			out.log.Warn("server's overflowed outage journal dropped: an operator says it is empty; it rejoins at its next probe", "server", name, "addr", b.addr)
		}
		return nil
	}
	return fmt.Errorf("no server %q in pool %q", name, out.pool)
}

// missedWrite marks b down at once, whatever server_failure_limit says:
// b is a copy of a key that failed, with err, a write another copy took
// and the client is told succeeded. Left up, b would serve the key's
// value of before to every read sent to it (a long run of the fault
// schedule failed seeds 115 and 143 so, under server_failure_limit 2),
// and its failure alone says
// nothing about which keys it missed. Marked down before the write is
// done, it has an outage whose journal notes the key with the copies that
// took it: reads go to them, and its return settles the key from them,
// as for any write made while a copy is out. The cost is a copy's reads
// going to its other copies until its next probe answers; a write still
// succeeds while one copy takes it. A request the server was never tried
// for (down, or the pool closing) is no failure of it: a down server's
// outage notes the key already.
func (b *backend) missedWrite(err error) {
	if b.former || b.pool.cfg.Ejection == EjectNone || errors.Is(err, ErrPoolClosed) || errors.Is(err, ErrServerDown) {
		return
	}
	b.failedTowards(1, err)
}
