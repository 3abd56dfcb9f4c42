package proxy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// An outage is what a server marked down missed. Under rehash its keys
// are served by stand-ins while it is out, and with replicas by their
// other copies: every write and delete of one of its keys goes elsewhere,
// and its own copy of the key grows older than the one written. So the
// pool notes each such key in the server's outage, a journal opened when
// the server is marked down, and when the server comes back exactly those
// keys are settled before it serves (see pool.restore): its copies of
// them removed, or replaced by the values written meanwhile (its front's
// settle), and the stand-ins' copies removed (release), so that it serves
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
// A write is noted once it is done, holding the pool's returns lock for
// reading from before it is routed until then, and a return settles the
// last keys under the lock, so that no write routed around the server is
// left out of what it settles: writes wait for those last keys only.

// outage is the journal of one server's outage.
type outage struct {
	began time.Time
	limit int

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

// putBack returns keys taken from the journal and not settled.
func (o *outage) putBack(keys []string, settled map[string][]string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.overflow {
		return
	}
	for _, k := range keys {
		o.keys[k] = append(o.keys[k], settled[k]...)
	}
}

// settleBatch is how many keys a return settles at a time.
const settleBatch = 512

// errOverflow is why a server whose outage journal overflowed stays down
// when it is not the pool's alone, which could be emptied instead.
var errOverflow = errors.New("its outage journal overflowed (more keys written elsewhere than outage_journal, or flush_all): what it missed is unknown, and it is not marked exclusive (sweep.exclusive), so it is not emptied")

// journals reports whether the pool keeps outage journals: whether a down
// server's keys are written elsewhere. Under random no key is any
// server's: there is nothing a returning server missed of its own.
func (p *pool) journals() bool {
	return p.cfg.Distribution != distRandom && (p.cfg.Ejection == EjectRehash || p.cfg.Replicas > 1)
}

// openOutage opens b's outage journal as b is marked down, before any
// request can be routed around it.
func (p *pool) openOutage(b *backend) {
	if !p.journals() || b.outage.Load() != nil {
		return
	}
	b.outage.Store(newOutage(p.cfg.OutageJournal))
	p.outages.Add(1)
}

// guardWrite takes the pool's returns lock for reading for a write about
// to be routed; the caller releases it with doneWrite once the write is
// done. flush writes the client's queued requests, when the lock must be
// waited for: a return waits for the writes holding it, and a write the
// client has queued but not written would never be done.
func (p *pool) guardWrite(flush func()) {
	if p.returns.TryRLock() {
		return
	}
	if flush != nil {
		flush()
	}
	p.returns.RLock()
}

// doneWrite notes the keys of a write that began at since and is done in
// the outages of their down servers, and releases the returns lock
// guardWrite took.
func (p *pool) doneWrite(keys [][]byte, since time.Time) {
	if p.outages.Load() > 0 {
		p.noteWrites(keys, since)
	}
	p.returns.RUnlock()
}

// noteWrites records each key of a write that began at since in the
// outage of each server marked down that would serve it were it up (see
// placement.servesIfUp) - its owner, and a server that stood in for its
// owner while the owner is out too - with the servers the write may have
// reached: the stand-in the key goes to now, or with replicas its other
// copies up, or out since the write began.
func (p *pool) noteWrites(keys [][]byte, since time.Time) {
	pl := p.place.Load()
	if len(pl.configured().servers) == 0 {
		return
	}
	var sc routeScratch
	for _, key := range keys {
		if pl.replicas > 1 {
			p.noteCopies(pl, key, since, &sc)
			continue
		}
		to := ""
		if r := pl.route(key, false, &sc); len(r) > 0 {
			to = r[0].addr
		}
		for _, b := range p.backends {
			o := b.outage.Load()
			if o == nil || !pl.servesIfUp(key, b, &sc) {
				continue
			}
			if to == b.addr { // written to b itself, before it was marked down
				o.note(key, "")
				continue
			}
			o.note(key, to)
		}
	}
}

// noteCopies notes key in the outage of each of its copies marked down,
// with its other copies the write may have reached: those up, and those
// marked down since the write began. None means the write reached no
// copy: nothing newer than what each holds is anywhere.
func (p *pool) noteCopies(pl *placement, key []byte, since time.Time, sc *routeScratch) {
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

// spillOutages marks every open outage overflowed: a write reached every
// key of the pool at once (flush_all broadcast).
func (p *pool) spillOutages() {
	for _, b := range p.backends {
		if o := b.outage.Load(); o != nil {
			o.spill()
		}
	}
}

// settleKeys settles b's copies of keys, which settled maps to the
// servers each was written to while b was out: those b serves once it is
// up again from the servers the placement sends each key to while b is
// out, and b's copies of the others removed - a key it stood in for whose
// own server is back, or one of another server's a stand-in of b's wrote
// while b was out - so that no later failure finds them. A key whose
// newest value is on no server up (every one it was written to is out)
// is removed from b too: a miss, never an older value, and b need not
// wait for the others.
func (p *pool) settleKeys(ctx context.Context, b *backend, keys []string, settled map[string][]string) error {
	pl := b.pool.place.Load()
	from := map[*backend][]string{}
	var drop []string
	var sc routeScratch
	for _, k := range keys {
		src, ok := p.settleSource(pl, b, k, settled[k], &sc)
		switch {
		case !ok:
			drop = append(drop, k)
		case src != nil:
			from[src] = append(from[src], k)
		}
	}
	for src, ks := range from {
		if err := p.front.settle(ctx, b, src, ks); err != nil {
			return err
		}
		if pl.replicas <= 1 {
			p.noteStandIn(pl, b, ks)
		}
	}
	if len(drop) > 0 {
		if err := p.front.dropCopies(ctx, b, drop); err != nil {
			return fmt.Errorf("removing copies of keys it no longer serves: %w", err)
		}
	}
	return nil
}

// noteStandIn notes keys, settled onto b, in the outage of each other
// server out that would serve them were it up: b stands in for them from
// its return on, holding copies as a write routed to it would have left,
// and their own server's return must remove those (see clearStandIns).
func (p *pool) noteStandIn(pl *placement, b *backend, keys []string) {
	var sc routeScratch
	for _, d := range p.backends {
		o := d.outage.Load()
		if d == b || o == nil {
			continue
		}
		for _, k := range keys {
			if pl.servesIfUp([]byte(k), d, &sc) {
				o.note([]byte(k), b.addr)
			}
		}
	}
}

// settleSource returns the server b's copy of key is settled from, nil
// when it stands as it is, or false when it is removed: the key's server
// while b is out, for a key b serves once up; with replicas, the first of
// its other copies it was written to (to) that is up, none when it was
// written to none.
func (p *pool) settleSource(pl *placement, b *backend, key string, to []string, sc *routeScratch) (*backend, bool) {
	if !pl.servesIfUp([]byte(key), b, sc) {
		return nil, false
	}
	if pl.replicas > 1 {
		for _, a := range to {
			if c := p.backendAt(a); c != nil && c != b && !c.health.isDown() {
				return c, true
			}
		}
		return nil, len(to) == 0
	}
	r := pl.route([]byte(key), false, sc)
	if len(r) == 0 || r[0] == b {
		return nil, false // no server is up to stand in
	}
	return r[0], true
}

// settleReturn settles what b missed while it was out, restores it and,
// once it owns its keys again, removes the stand-ins' copies. The error
// says why b stays down: its front could not settle, or its journal
// overflowed and it is not the pool's alone.
func (p *pool) settleReturn(b *backend, o *outage) error {
	ctx, settled := p.ctx, map[string][]string{}
	if o.overflowed() {
		if !p.cfg.exclusive(b.node) {
			return errOverflow
		}
		if err := p.front.empty(ctx, b); err != nil {
			return fmt.Errorf("its outage journal overflowed; emptying it (exclusive): %w", err)
		}
		p.log.Warn("server emptied before rejoining: its outage journal overflowed, so what it missed is unknown", "server", b.name(), "addr", b.addr)
	} else {
		// While writes go on around it; what they write meanwhile is
		// noted, and settled in the next batches, up to a bound: writes
		// that outrun the settling are settled under the lock.
		for round := o.size()/settleBatch + 16; round > 0; round-- {
			keys := o.nextKeys(settleBatch, settled)
			if len(keys) == 0 {
				break
			}
			if err := p.settleKeys(ctx, b, keys, settled); err != nil {
				o.putBack(keys, settled)
				return err
			}
		}
	}
	// The last keys, with no write in flight around b.
	p.returns.Lock()
	defer p.returns.Unlock()
	for keys := o.nextKeys(settleBatch, settled); len(keys) > 0; keys = o.nextKeys(settleBatch, settled) {
		if err := p.settleKeys(ctx, b, keys, settled); err != nil {
			o.putBack(keys, settled)
			return err
		}
	}
	if o.overflowed() && !p.cfg.exclusive(b.node) {
		return errOverflow // overflowed since: settled nothing that counts
	}
	if err := p.clearStandIns(ctx, b, settled); err != nil {
		o.putBack(slices.Collect(maps.Keys(settled)), settled)
		return err
	}
	b.stats.settled.Add(uint64(len(settled)))
	b.outage.Store(nil)
	p.outages.Add(-1)
	p.restoreChange(b.restore)
	p.log.Info("server settled and restored", "server", b.name(), "addr", b.addr, "keys", len(settled),
		"outage", time.Since(o.began).Round(time.Millisecond))
	return nil
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
func (p *pool) clearStandIns(ctx context.Context, b *backend, settled map[string][]string) error {
	if p.cfg.Replicas > 1 {
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
		s := p.backendAt(addr)
		if s == nil {
			continue // no longer the pool's
		}
		for i := 0; i < len(keys); i += settleBatch {
			if s.outage.Load() == nil {
				err := p.front.dropCopies(ctx, s, keys[i:min(i+settleBatch, len(keys))])
				if err == nil {
					continue
				}
				if s.outage.Load() == nil {
					return fmt.Errorf("removing the copies stand-in %s holds of its keys: %w", s.addr, err)
				}
			}
			o := s.outage.Load() // out, or out since the release failed
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

// errNotOverflowed is the error of a rejoin asked of a server whose
// outage journal says what it missed: it rejoins by itself.
var errNotOverflowed = errors.New("its outage journal says what it missed: it is settled and rejoins by itself once it answers")

// rejoinEmptied drops the overflowed outage journal of the server named
// name, which an operator emptied, so that it rejoins at its next
// successful probe holding nothing older than what the pool serves. The
// error says why it does not: no such server, not down, or a journal that
// has not overflowed.
func (p *pool) rejoinEmptied(name string) error {
	for _, b := range p.backends {
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
			p.outages.Add(-1)
			p.log.Warn("server's overflowed outage journal dropped: an operator says it is empty; it rejoins at its next probe", "server", name, "addr", b.addr)
		}
		return nil
	}
	return fmt.Errorf("no server %q in pool %q", name, p.name)
}

// backendAt returns the pool's server at addr, or nil.
func (p *pool) backendAt(addr string) *backend {
	for _, b := range p.backends {
		if b.addr == addr {
			return b
		}
	}
	return nil
}
