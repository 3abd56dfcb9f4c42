package proxy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// settleKeys settles b's copies of keys, which settled maps to the
// servers each was written to while b was out: those b serves once it is
// up again from the servers the placement sends each key to while b is
// out, and b's copies of the others removed - a key it stood in for whose
// own server is back, or one of another server's a stand-in of b's wrote
// while b was out - so that no later failure finds them. A key whose
// newest value is on no server up (every one it was written to is out)
// is removed from b too: a miss, never an older value, and b need not
// wait for the others - unless b owns it and every write went to one
// stand-in out that answers (see standInOut). A key b's return sends to
// another server (twemproxy's distributions) is settled there from where
// it is read now, or removed there when no write of the outage reached
// that copy (see returnMove). around is b's outage while writes go on
// around b (settleAround), nil under the returns lock.
func (out *outages) settleKeys(ctx context.Context, b *backend, around *outage, keys []string, settled map[string][]string) error {
	pl := out.place.Load()
	sp := planSettle(pl, b, keys, settled)
	from, moved, unsure, drop := sp.from, sp.moved, sp.unsure, sp.drop
	for at, ks := range sp.left {
		out.noteStandIn(pl, b, at, ks)
	}
	for at, ks := range moved {
		// Keys of servers up that b's return sends back to them: their
		// copies there are from before b went out, and a window's
		// fallback may read them while b is still out (see gate).
		if err := out.front.settle(ctx, at[0], at[1], ks, out.gate(around)); err != nil {
			return fmt.Errorf("settling on %s the keys its return sends back there: %w", at[0].addr, err)
		}
		out.noteStandIn(pl, b, at[0], ks)
	}
	for at, ks := range unsure {
		if err := out.front.dropCopies(ctx, at, ks); err != nil {
			return fmt.Errorf("removing from %s the keys its return sends there, read meanwhile where no write of the outage went: %w", at.addr, err)
		}
		out.noteStandIn(pl, b, at, ks)
	}
	for src, ks := range from {
		// b serves nothing while it settles: nothing reads its copies.
		if err := out.front.settle(ctx, b, src, ks, nil); err != nil {
			if !src.health.isDown() {
				return err
			}
			// A stand-in out that does not answer: its copies are
			// removed from b, a miss as for a stand-in gone, and b
			// need not wait for it.
			drop = append(drop, ks...)
			continue
		}
		if pl.replicas <= 1 {
			out.noteStandIn(pl, b, b, ks)
		}
	}
	if len(drop) > 0 {
		if err := out.front.dropCopies(ctx, b, drop); err != nil {
			return fmt.Errorf("removing copies of keys it no longer serves: %w", err)
		}
	}
	return nil
}

// settlePlan is what a return does with the keys it settles (see
// settleKeys): b's copies settled from a server (from), keys its return
// sends to another server settled there from where they are read now
// (moved, by the pair of them), or removed there when no write of the
// outage vouched for that copy (unsure, by where they go), and b's
// copies removed (drop); and keys its return leaves where they are read
// now, or on b removed (left, by that server), noted for the servers out
// whose returns take them from there.
type settlePlan struct {
	from   map[*backend][]string
	moved  map[[2]*backend][]string
	unsure map[*backend][]string
	left   map[*backend][]string
	drop   []string
}

// planSettle sorts keys, taken from b's journal with the servers each was
// written to in settled, into a settlePlan by pl; it adds to settled the
// servers whose copies are removed with the stand-ins' (clearStandIns).
func planSettle(pl *placement, b *backend, keys []string, settled map[string][]string) settlePlan {
	sp := settlePlan{from: map[*backend][]string{}, moved: map[[2]*backend][]string{}, unsure: map[*backend][]string{},
		left: map[*backend][]string{}}
	var sc routeScratch
	for _, k := range keys {
		src, ok, unvouched := settleSource(pl, b, k, settled[k], &sc)
		switch {
		case !ok:
			sp.drop = append(sp.drop, k)
			if unvouched != nil {
				// Removed with the stand-ins' copies (clearStandIns), so
				// that no read finds it once b is back - a fallback of
				// the return's migration window included.
				settled[k] = append(settled[k], unvouched.addr)
			}
			sp.planMove(pl, b, k, settled, &sc)
		case src != nil:
			sp.from[src] = append(sp.from[src], k)
			if unvouched != nil { // read from a stand-in out: see standInOut
				settled[k] = append(settled[k], unvouched.addr)
			}
		}
	}
	return sp
}

// planMove sorts k, which b's return removes from b, by where the return
// sends it (see returnMove) into sp, and adds to settled the servers
// whose copies of it are removed with the stand-ins'.
func (sp *settlePlan) planMove(pl *placement, b *backend, k string, settled map[string][]string, sc *routeScratch) {
	dst, src := pl.returnMove([]byte(k), b, sc)
	vouched := src != nil && slices.Contains(settled[k], src.addr) && !slices.Contains(settled[k], unsureStandIn)
	switch {
	case dst == nil:
		if pl.full != nil && pl.replicas <= 1 && pl.servesIfUp([]byte(k), b, sc) {
			// Under twemproxy's distributions b serves the key, its copy
			// removed: noted, as a key it settles is, in the outage of
			// each server out whose return takes it from b (modula: a key
			// of r0's written to r2 while r3 alone was out, read at r1
			// once r0 is out too). Before, r3's return noted it nowhere,
			// and r0's journal did not name it (written before r0 went
			// out): r0's return served its copy from before (the fault
			// schedule's seed 4024). Under kolco's, which place a key on
			// a server up whoever else is out, a server out ahead of b
			// may hold a write b's journal never saw, the newest: it
			// takes the key back as it is
			// (TestStandInsReturnReadsNoStandInOut).
			sp.left[b] = append(sp.left[b], k)
		}
	case dst == src && vouched:
		// The key stays where a write of the outage put it, with another
		// server out (modula: a key of r2's written to r0 while r3 alone
		// was out, then r2 out too). That copy is the newest: it is kept,
		// not removed with the stand-ins' copies, and noted in the outage
		// of each server out whose return takes the key from there, as a
		// key moved is. Before, r3's return removed it and noted it
		// nowhere, as r2's journal did not name it (written before r2
		// went out): r2's return served its copy from before (the fault
		// schedule's seed 4024).
		settled[k] = slices.DeleteFunc(settled[k], func(a string) bool { return a == src.addr })
		sp.left[src] = append(sp.left[src], k)
	case vouched:
		sp.moved[[2]*backend{dst, src}] = append(sp.moved[[2]*backend{dst, src}], k)
	default:
		// No write of the outage reached the copy read now, which may be
		// one from before the outage (the stand-in written to is out, or
		// a change sent the key back to a server that held it): the key
		// is removed where the return sends it, even where it is read
		// now, and from there.
		sp.unsure[dst] = append(sp.unsure[dst], k)
		if src != dst {
			settled[k] = append(settled[k], src.addr)
		}
	}
}

// noteStandIn notes keys, which b's return leaves on holder (b, or a
// server up its return sends them back to), in the outage of each other
// server out whose return takes them from holder (see returnTakes): holder
// stands in for them from b's return on, holding copies as a write routed
// to it would have left, and that server's return must settle them where
// it sends them and remove holder's copies (see clearStandIns). A server
// b is ahead of (b owns the key, or stands in before it) takes none of
// them back: noted, its return removed b's copy, the newest, while b
// served the key (a Redis pool lost the writes of a shard's outage so
// when a stand-in out came back after the shard).
func (out *outages) noteStandIn(pl *placement, b, holder *backend, keys []string) {
	for _, d := range out.backends {
		o := d.outage.Load()
		if d == b || d == holder || o == nil {
			continue
		}
		takes := pl.returnTakes(out.cfg, out.backends, b, holder, d)
		for _, k := range keys {
			if takes([]byte(k)) {
				o.note([]byte(k), holder.addr)
			}
		}
	}
}

// settleSource returns the server b's copy of key is settled from, nil
// when it stands as it is, or false when it is removed: the key's server
// while b is out, for a key b serves once up, unless a write noted may
// have gone to b itself (see unsureStandIn), or none went to that server
// (then that server is returned as unvouched: its copy, if any, is removed
// too, and b's is read from the one stand-in out every write went to when
// there is one: see standInOut); with replicas, the first of its other copies it was written to
// (to) that is up, none when it was written to none.
func settleSource(pl *placement, b *backend, key string, to []string, sc *routeScratch) (src *backend, ok bool, unvouched *backend) {
	if !pl.servesIfUp([]byte(key), b, sc) {
		return nil, false, nil
	}
	if pl.replicas > 1 {
		if slices.Contains(to, unsureStandIn) {
			return nil, false, nil // noted under another placement
		}
		return settleCopy(pl, b, key, to, sc)
	}
	r := pl.route([]byte(key), false, sc)
	if len(r) == 0 || r[0] == b {
		return nil, false, nil // no server is up to stand in
	}
	if slices.Contains(to, unsureStandIn) {
		return nil, false, nil // the stand-in's copy may be older than b's
	}
	if !slices.Contains(to, r[0].addr) {
		// No write of the outage, nor a settle, reached the server the
		// key is read from now: the stand-in written to is out or gone
		// (a change removed it), and this one's copy, if any, may be one
		// a change left behind, older than anything written since.
		if s := standInOut(pl, b, key, to); s != nil {
			return s, true, r[0]
		}
		return nil, false, r[0]
	}
	return r[0], true, nil
}

// standInOut returns the server every write of key while b was out went
// to, to, when b owns key and passes it over while down (ownsPassedOver)
// and that server is one stand-in marked down itself: its copy is the
// newest, and b's return reads it from there when it answers (a stand-in
// marked down after a timeout took a Sentinel pool's writes of a shard
// failed over; removed, they were lost). Only for b's own keys: b's
// journal notes every write of them, while a key b stands in for is
// written to its owner, unnoted in b's journal, while the owner is up -
// read from a stand-in out, such a key's return served a value older than
// the owner's (the outage model, seed 2: read 1 after 3 was acknowledged).
// nil otherwise.
func standInOut(pl *placement, b *backend, key string, to []string) *backend {
	if len(to) != 1 || !pl.ownsPassedOver([]byte(key), b) {
		return nil
	}
	s := backendAt(pl.servers, to[0])
	if s == nil || s == b || !s.health.isDown() {
		return nil
	}
	return s
}

// settleCopy is settleSource with replicas: the first of key's copies
// now, other than b, that a write of the outage reached (to) and that is
// up; none when the outage wrote it to none. A server the key was
// written to that is no longer one of its copies is not one: a change
// since moved the key's copy from it, and the writes after the change
// went to the key's copies of now, so its value may be older (the fault
// schedule's seed 85 settled a key from such a server, and read its older
// value at the copy back). With no copy of now to settle from, the key is
// removed from b.
func settleCopy(pl *placement, b *backend, key string, to []string, sc *routeScratch) (src *backend, ok bool, unvouched *backend) {
	if len(to) == 0 {
		return nil, true, nil
	}
	full := pl.configured()
	sc.idx, sc.nodes = full.copies(sc.idx[:0], sc.nodes, []byte(key))
	for _, i := range sc.idx {
		if c := full.servers[i]; c != b && !c.health.isDown() && slices.Contains(to, c.addr) {
			return c, true, nil
		}
	}
	return nil, false, nil
}

// errSettling is why a server stays down whose outage another return is
// settling: the pool this one replaces, or the one replacing it, shares
// the journal (see pool.inherit, pool.downWith).
var errSettling = errors.New("another pool is settling what it missed (a change of the pool meanwhile): tried again at the next probe")

// settleReturn settles what b missed while it was out, restores it and,
// once it owns its keys again, removes the stand-ins' copies. The error
// says why b stays down: its front could not settle, its journal
// overflowed and it is not the pool's alone, another return is settling
// it (errSettling), or the pool does not serve (errNotServing, which
// wraps errSettling: see backend_return_change.go).
//
// One return at a time settles an outage: a change's pool shares the
// journal of the pool it replaces, and is started beside it, so both may
// find b answering at once. A return takes keys out of the journal as it
// settles them, and puts them back if it fails; another return meanwhile
// would find the journal empty and restore b with nothing settled, b
// serving its values of before the outage (the fault schedule's seed 225:
// the replaced pool's return waited on a stalled stand-in while the new
// pool's probe restored r0, "keys=0").
func (out *outages) settleReturn(b *backend, o *outage) error {
	if out.held.Load() {
		return errNotServing
	}
	if !o.settling.TryLock() {
		return errSettling
	}
	defer o.settling.Unlock()
	if o.late.Load() > 0 {
		return errLate
	}
	ctx, settled := out.ctx, map[string][]string{}
	if err := out.settleAround(ctx, b, o, settled); err != nil {
		return err
	}
	// The last keys, with no write in flight around b.
	out.returns.Lock()
	defer out.returns.Unlock()
	for keys := o.nextKeys(settleBatch, settled); len(keys) > 0; keys = o.nextKeys(settleBatch, settled) {
		if err := out.settleKeys(ctx, b, nil, keys, settled); err != nil {
			o.putBack(keys, settled)
			return err
		}
	}
	if o.overflowed() && !out.cfg.exclusive(b.node) {
		return errOverflow // overflowed since: settled nothing that counts
	}
	if err := out.clearStandIns(ctx, b, settled); err != nil {
		o.putBack(slices.Collect(maps.Keys(settled)), settled)
		return err
	}
	b.stats.settled.Add(uint64(len(settled)))
	// The outage ends once b serves by the placement: twemproxy's is
	// rebuilt after b is marked up, and a read meanwhile still goes to a
	// stand-in, whose copy no write of the outage vouched for is fenced
	// only while the outage is open (writes wait on the returns lock).
	out.restoreChange(b.restore)
	b.outage.Store(nil)
	out.count.Add(-1)
	out.log.Info("server settled and restored", "server", b.name(), "addr", b.addr, "keys", len(settled),
		"outage", time.Since(o.began).Round(time.Millisecond))
	return nil
}

// settleAround settles what b missed while writes go on around it, the
// keys it settles added to settled: an overflowed journal's server
// emptied, if it is the pool's alone; else the copies of the keys a
// change gave it while it was out removed (sweepGained), and the
// journal's keys settled in batches, what the writes note meanwhile in
// the next ones, up to a bound: writes that outrun the settling are
// settled under the returns lock (settleReturn).
func (out *outages) settleAround(ctx context.Context, b *backend, o *outage, settled map[string][]string) error {
	if o.overflowed() {
		if !out.cfg.exclusive(b.node) {
			return errOverflow
		}
		if err := out.front.empty(ctx, b); err != nil {
			return fmt.Errorf("its outage journal overflowed; emptying it (exclusive): %w", err)
		}
		out.log.Warn("server emptied before rejoining: its outage journal overflowed, so what it missed is unknown", "server", b.name(), "addr", b.addr)
		return nil
	}
	if err := out.sweepGained(ctx, b, &o.missed); err != nil {
		return err
	}
	for round := o.size()/settleBatch + 16; round > 0; round-- {
		keys := o.nextKeys(settleBatch, settled)
		if len(keys) == 0 {
			break
		}
		if err := out.settleKeys(ctx, b, o, keys, settled); err != nil {
			o.putBack(keys, settled)
			return err
		}
	}
	return nil
}

// gate returns what a settle around the writes o notes asks once it has
// read the values it writes to a server up and before it writes them
// there; nil for none (the caller holds the returns lock already). From
// then until it calls the release, no write is in flight around the
// returning server, and stale names the keys a write reached since the
// return took them from the journal: those keep the copy they have, and
// the write, which noted them again, has them settled in a later round.
// A value settled on a server up may be read at once, while the server
// returning is still out: a window's fallback reads the server the return
// sends the key back to, the key's own before the ejection. A value read
// before a delete and written there after the window's delete had run was
// served to every read that missed at the stand-in (the fault schedule's
// seed 3553, 1 of 10 replays: modula, a delete while s3's return settled,
// read back until s3 was restored).
func (out *outages) gate(o *outage) func() (stale func(key string) bool, release func()) {
	if o == nil {
		return nil
	}
	return func() (func(string) bool, func()) {
		out.returns.Lock()
		return o.notedAgain, out.returns.Unlock
	}
}

// notedAgain reports whether key was noted since the return took it:
// a write reached it, or the journal overflowed and no longer says.
func (o *outage) notedAgain(key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.keys[key]
	return ok || o.overflow
}

// clearStandIns removes, from the stand-ins, their copies of the keys
// settled on b as it returns, before it is restored and with no write in
// flight around it (the caller holds the returns lock): from then on b
// serves them, and a copy left on a stand-in would be read again, older
// than what b serves, when b is out a second time. A stand-in out itself
// has the keys noted in its own outage, so that its return removes them.
// The error is a stand-in's that could not remove them: b stays down until
// they are removed, as staying down costs misses and a stale copy a wrong
// answer.
//
// Reads of the keys still go to the stand-ins until b is restored: they
// miss meanwhile, and a client that refills one writes after b is back.
func (out *outages) clearStandIns(ctx context.Context, b *backend, settled map[string][]string) error {
	if out.cfg.Replicas > 1 {
		return nil // a key's servers are its copies: no stand-in took it
	}
	byAddr := map[string][]string{}
	for k, addrs := range settled {
		for _, a := range addrs {
			if a != b.addr {
				byAddr[a] = append(byAddr[a], k)
			}
		}
	}
	for addr, keys := range byAddr {
		s := backendAt(out.backends, addr)
		if s == nil {
			continue // no longer the pool's
		}
		for i := 0; i < len(keys); i += settleBatch {
			if s.outage.Load() == nil {
				err := out.front.dropCopies(ctx, s, keys[i:min(i+settleBatch, len(keys))])
				if err == nil {
					continue
				}
				if s.outage.Load() == nil {
					return fmt.Errorf("removing the copies stand-in %s holds of its keys: %w", s.addr, err)
				}
			}
			o := s.outage.Load() // out, or out since the removal failed
			if o == nil {
				return fmt.Errorf("removing the copies stand-in %s holds of its keys: it came back meanwhile", s.addr)
			}
			for _, k := range keys[i:] {
				o.note([]byte(k), "")
			}
			break
		}
	}
	return nil
}
