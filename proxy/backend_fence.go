package proxy

import (
	"slices"
	"time"
)

// A stand-in's own copies of the keys it stands in for may be older than
// any the pool serves: a change that moved a key from it to another
// server left its copy behind (Redis pools' changes are cold, and a
// memcached window ends), and when that server is marked down the key is
// routed back to the stand-in, which would serve the value of before the
// change. So while a server is out, the first read of one of its keys at
// a stand-in that no write of the outage reached removes the stand-in's
// copy first (fence): the read misses, never returns an older value, and
// the client that refills the key writes it to the stand-in, noted in the
// outage as any write around the server is. A journal that overflowed no
// longer says which keys were written: each read of the server's keys at
// a stand-in removes its copy first, until the server is back.

// A write is noted in the outage once it is done, with the stand-in the
// key goes to then; but a write that began before the server was marked
// down may have been sent to the server itself (and failed there, or
// succeeded just before), the stand-in never reached: its copy may be
// older than the server's, and copied onto the server at its return it
// would be served there (found by the fault schedules: a Redis cache
// under bounded, a server cut as a key of its was set). Such a key is
// noted with unsureStandIn among its stand-ins: a read at the stand-in
// removes its copy first, and the return removes the key from the server
// and from its stand-ins rather than copy it - a miss, never an older
// value.

// unsureStandIn is noted among a key's stand-ins for a write that may not
// have reached the stand-in it was noted with.
const unsureStandIn = "?"

// A change of the placement while a server is out (a reload, a source's
// version) makes its journal the history of two placements: a key noted
// before the change was written to a stand-in of the old one, and one the
// change gives to another server that is up is written there, unnoted,
// since the server out would not serve it. If that server goes out in
// turn, the returning one serves the key again and would take the old
// stand-in's copy, older than what the new owner acknowledged (found by
// the fault schedules: a Redis cache under jump, a server added while r1
// was out and stopped after). So the journal a pool that replaces another
// takes over counts every key it noted, and notes from then on, as unsure:
// the return removes them rather than copy a stand-in's, and a read at a
// stand-in removes its copy first - misses, never an older value. A
// replacing pool that sends every key to the server of the same name as
// the old one did (placesAlike) changes no key's owner nor its stand-ins
// but in address: a failover, which a membership source (Sentinel) makes
// while a server is out as a rule, not by chance - the failed primary's
// own outage, or another server's marked down beside it. Its journal
// stays sure: a stand-in moved to another address is no longer among the
// ones its keys were noted with, and those are removed, as for a stand-in
// gone. (Counted unsure, every write of the outage was removed at the
// return: a Sentinel pool with auto_eject_hosts lost 518 acknowledged
// writes of a shard marked down beside another's failover.)

// placementChanged marks every key of the journal, and each one noted from
// now on, unsure (see unsureStandIn).
func (o *outage) placementChanged() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.changed = true
	for k, to := range o.keys {
		if !slices.Contains(to, unsureStandIn) {
			o.keys[k] = append(to, unsureStandIn)
		}
	}
}

// markedDown records that the server was marked down at t: writes that
// begin from then on are routed around it.
func (o *outage) markedDown(t time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.marked.IsZero() {
		o.marked = t
	}
}

// routedAround reports whether a write that began at since was routed
// around the server: it began once the server was marked down.
func (o *outage) routedAround(since time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !o.marked.IsZero() && !since.Before(o.marked)
}

// fence reports whether a read of key at the stand-in at addr must remove
// the stand-in's copy first, and records that it was removed.
func (o *outage) fence(key []byte, addr string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.overflow {
		return true
	}
	to := o.keys[string(key)]
	if slices.Contains(to, addr) && !slices.Contains(to, unsureStandIn) || slices.Contains(o.fenced[string(key)], addr) {
		return false
	}
	if o.fenced == nil {
		o.fenced = map[string][]string{}
	}
	if len(o.fenced) < o.limit {
		o.fenced[string(key)] = append(o.fenced[string(key)], addr)
	}
	return true
}

// notedAway reports whether key, noted in the outage, is fenced at a
// server b's return leaves it on: under twemproxy's distributions, whose
// placement a change or another server's mark moves keys in while b is
// out, a key written elsewhere may be read meanwhile from a server that
// held it before the outage, and b's return sends it nowhere else (a
// Redis cache's server added while another was out sent keys back to
// their server of before: the fault schedule's seed 2770 read their
// values of before the outage).
func (o *outage) notedAway(pl *placement, key []byte) bool {
	if pl.full == nil {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.keys[string(key)]
	return ok
}

// unfence forgets that key was removed from the stand-in at addr: the
// removal failed, and the next read tries again.
func (o *outage) unfence(key, addr string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if i := slices.Index(o.fenced[key], addr); i >= 0 {
		o.fenced[key] = slices.Delete(o.fenced[key], i, i+1)
	}
}

// fenceReads removes, from the stand-ins a read of n keys (keyOf) goes to
// by pl, their copies of the keys of servers out that no write of the
// outage reached them with (see outage.fence), before the read is sent.
// flush writes the client's queued requests first, as the removal waits.
// A removal that fails is tried again by the next read; the read goes on,
// to a stand-in that most likely fails it too.
//
// It is called on a read after routing (a server marked down since has its
// outage open), and returns at once while no server is out. A read outside
// a migration window (mcRequest.single and forward, redisClient.send)
// checks out.count itself before it calls, so that a read while every
// server is up - nearly every read - runs nothing of the fences.
func (out *outages) fenceReads(pl *placement, n int, keyOf func(i int) []byte, flush func()) {
	if out.count.Load() == 0 || pl.replicas > 1 {
		return
	}
	out.fence(pl, n, keyOf, flush)
}

// fence is fenceReads while a server is out.
func (out *outages) fence(pl *placement, n int, keyOf func(i int) []byte, flush func()) {
	var sc routeScratch
	var at map[*backend][]string
	var by map[string]*outage
	for i := range n {
		key := keyOf(i)
		r := pl.route(key, false, &sc)
		if len(r) == 0 {
			continue
		}
		s := r[0]
		for _, b := range out.backends {
			o := b.outage.Load()
			if o == nil || b == s || !pl.movesOnReturn(key, b, s, &sc) && !o.notedAway(pl, key) || !o.fence(key, s.addr) {
				continue
			}
			if at == nil {
				at, by = map[*backend][]string{}, map[string]*outage{}
			}
			at[s] = append(at[s], string(key))
			by[string(key)] = o
			break
		}
	}
	if at == nil {
		return
	}
	if flush != nil {
		flush()
	}
	for s, ks := range at {
		if err := out.front.dropCopies(out.ctx, s, ks); err != nil {
			for _, k := range ks {
				by[k].unfence(k, s.addr)
			}
			out.log.Warn("removing a stand-in's copies before reading them failed", "server", s.name(), "addr", s.addr, "keys", len(ks), "err", err)
		}
	}
}
