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
// copy first (fence), as does every read of it there until that removal
// is done (see outage.removed): the read misses, never returns an older
// value, and the client that refills the key writes it to the stand-in,
// noted in the outage as any write around the server is. A journal that overflowed no
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
// the stand-in's copy first: no write of the outage vouched for it, and
// no removal of it there is done yet (see fenced).
func (o *outage) fence(key []byte, addr string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.overflow {
		return true
	}
	to := o.keys[string(key)]
	return !(slices.Contains(to, addr) && !slices.Contains(to, unsureStandIn) || slices.Contains(o.fenced[string(key)], addr))
}

// removed records that the stand-in at addr's copy of key is removed: the
// reads from now on go to it as they are. It is recorded once the removal
// is done, not as it is sent: a read of another client at the same moment
// that found it recorded went to the stand-in at once, ahead of the
// removal still on its way, and read the copy (the fault schedule's seed
// 5639: a Redis cache under modula read a value of before a change 0.1 s
// after r0 was cut, while another client's read of the key removed it).
// Until then each read removes the copy itself, before it is sent.
func (o *outage) removed(key, addr string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fenced == nil {
		o.fenced = map[string][]string{}
	}
	if len(o.fenced) < o.limit && !slices.Contains(o.fenced[key], addr) {
		o.fenced[key] = append(o.fenced[key], addr)
	}
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

// fenceReads removes, from the stand-ins a read of n keys (keyOf) goes to
// by pl, their copies of the keys of servers out that no write of the
// outage reached them with (see outage.fence), before the read is sent.
// flush writes the client's queued requests first, as the removal waits.
// A removal that fails returns its error, and the caller fails the read
// with it rather than send it: a removal that timed out on a stalled link
// was lost with its connection, and the read, on a new one once the link
// healed, read the copy it was to remove (the fault schedule's seed 7329:
// a Redis cache under ring read a value of before a change, older than a
// write acknowledged at the server out). The next read tries the removal
// again.
//
// It is called on a read after routing (a server marked down since has its
// outage open), and returns at once while no server is out. A read outside
// a migration window (mcRequest.single and forward, redisClient.send)
// checks out.count itself before it calls, so that a read while every
// server is up - nearly every read - runs nothing of the fences.
func (out *outages) fenceReads(pl *placement, n int, keyOf func(i int) []byte, flush func()) error {
	if out.count.Load() == 0 || pl.replicas > 1 {
		return nil
	}
	return out.fence(pl, n, keyOf, flush)
}

// fence is fenceReads while a server is out.
func (out *outages) fence(pl *placement, n int, keyOf func(i int) []byte, flush func()) error {
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
		if _, twice := by[string(key)]; twice {
			continue // named twice in the read: removed once
		}
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
		return nil
	}
	if flush != nil {
		flush()
	}
	var failed error
	for s, ks := range at {
		if err := out.front.dropCopies(out.ctx, s, ks); err == nil {
			for _, k := range ks {
				by[k].removed(k, s.addr)
			}
		} else {
			out.log.Warn("removing a stand-in's copies before reading them failed: the read fails", "server", s.name(), "addr", s.addr, "keys", len(ks), "err", err)
			failed = serverError(s.addr, "", err) // answered as the stand-in's failure, no Go text
		}
	}
	return failed
}

// lost reports whether o, a write, may not have changed its server: it
// failed, or its server refused it (see refusedReply).
func (o *op) lost() bool { return o.err != nil || refusedReply(o.reply) }

// refusedReply reports whether a write's reply says its server did not
// apply it: a Redis error (-NOREPLICAS, -OOM, -READONLY, ...), or
// memcached's NOT_STORED, EXISTS (a cas that did not match), an error, or
// the meta commands' NS and EX. Such a write counts as lost for the
// outages' journal (guardLost): it changed nothing at the stand-in, whose
// copy of before it must not vouch for - read there, or settled onto the
// key's server at its return (the fault schedule's seed 9309: a stand-in
// refusing writes kept a value of before a change, read back and moved
// home over a newer one).
func refusedReply(reply []byte) bool {
	if len(reply) > 0 && reply[0] == '-' {
		return true
	}
	for _, p := range [...]string{"NOT_STORED", "EXISTS", "SERVER_ERROR", "CLIENT_ERROR", "ERROR", "NS", "EX"} {
		if len(reply) >= len(p) && string(reply[:len(p)]) == p && (len(reply) == len(p) || reply[len(p)] == ' ' || reply[len(p)] == '\r') {
			return true
		}
	}
	return false
}
