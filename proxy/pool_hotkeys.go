package proxy

import (
	"bytes"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kolco-dev/kolco/sim/trace"
)

// A pool's hot-key cache (its setting hot_keys, [HotKeys]) answers reads
// of the keys its traffic sample finds hottest, so that a key read more
// than its share does not make its server the pool's busiest: under Zipf
// traffic the hottest key alone can carry a fifth of the requests, and no
// placement spreads one key.
//
// The keys cached are a set rebuilt from the sample's Space-Saving summary
// by requests every hotRefresh, on the request path, by the first request
// that finds the set due (the summary's lock is taken then, as the sample
// takes it). The set is an immutable table of entries published with one
// atomic pointer, as a placement is: a lookup hashes the key (the
// sample's hash, which the summary keys by), probes the table and takes no
// lock. An entry kept from one set to the next is the same entry, so
// that an invalidation of either reaches both.
//
// An entry's value is a reply as the server sent it, stamped with the
// entry's generation when the read that brought it was sent: an
// invalidation adds one to the generation, and a value of an older one is
// never answered - so a read sent before a write and answered after it
// cannot leave its older value behind. A value is also stamped with the
// placement it was read under and is answered only under that placement
// and while no change moves keys (a migration window, a store's move):
// a key's server is then the one the value came from.
//
// What may answer a value is the front's: a memcached pool answers one
// that is younger than staleness (mc_hotkeys.go); a Redis pool answers
// one its server's CLIENT TRACKING has not invalidated, after the server
// confirms that no invalidation was on its way (redis_hotkeys.go).

// hotRefresh is how often the set of cached keys is rebuilt from the
// sample: a key that turns hot is cached within a second, and the
// summary's lock is taken once a second for it.
const hotRefresh = time.Second

// hotCache is a pool's hot-key cache.
type hotCache struct {
	size      int
	staleness int64 // nanoseconds; 0 when values are invalidated instead
	traffic   *trafficSample
	set       atomic.Pointer[hotSet]
	// due is when the set is next rebuilt (unix nanoseconds).
	due     atomic.Int64
	rebuild sync.Mutex // held while the set is rebuilt
	// epoch drops every value at once: a value of another epoch is never
	// answered (a flush, a server's lost tracking).
	epoch atomic.Uint64

	// What an operator sees: reads answered from the cache, reads of a
	// cached key that went to the server, values stored, and
	// invalidations.
	hits, misses, fills, invalidations atomic.Uint64

	// front is what the pool's front keeps for the cache (a Redis pool's
	// trackers: see redis_hotkeys.go), nil for none.
	front hotFront
}

// hotFront is what a front keeps for its pool's cache.
type hotFront interface {
	// untracked names the servers whose keys are not cached now.
	untracked() []string
}

// hotSet is the set of cached keys: entries found by their hash in an
// open-addressed table.
type hotSet struct {
	entries []*hotEntry
	table   []int32 // entry index + 1 by hash, 0 empty; linear probing
	mask    uint64
}

// hotEntry is one cached key.
type hotEntry struct {
	key  []byte
	hash uint64
	// gen counts the invalidations of the key.
	gen atomic.Uint64
	val atomic.Pointer[hotValue]
	// filling is set while a read that is to store the key's value is
	// under way (a Redis pool sends one at a time).
	filling atomic.Bool
}

// hotValue is a cached reply.
type hotValue struct {
	reply []byte
	place *placement
	from  *backend
	born  int64 // unix nanoseconds: when the read that brought it was sent
	gen   uint64
	epoch uint64
}

// newHotCache returns the hot-key cache of pool p, or nil when it is off.
func newHotCache(p *pool) *hotCache {
	c := p.cfg.WithDefaults()
	if !c.HotKeys.Enabled || p.traffic == nil {
		return nil
	}
	h := &hotCache{size: c.HotKeys.size(c.Traffic.TopKeys), traffic: p.traffic}
	if !c.Redis {
		h.staleness = int64(c.HotKeys.staleness())
	}
	h.set.Store(&hotSet{table: make([]int32, 1)})
	return h
}

// lookup returns the entry of key, rebuilding the set first when it is
// due at now (unix nanoseconds), or nil when the key is not cached.
func (c *hotCache) lookup(key []byte, now int64) *hotEntry {
	if now >= c.due.Load() {
		c.refresh(now)
	}
	return c.set.Load().find(key, trace.SampleHashBytes(key))
}

// find returns the entry of key, whose hash is h, or nil.
func (s *hotSet) find(key []byte, h uint64) *hotEntry {
	for j := h & s.mask; s.table[j] != 0; j = (j + 1) & s.mask {
		if e := s.entries[s.table[j]-1]; e.hash == h && bytes.Equal(e.key, key) {
			return e
		}
	}
	return nil
}

// refresh rebuilds the set from the sample's hottest keys, unless another
// request is at it.
func (c *hotCache) refresh(now int64) {
	if !c.rebuild.TryLock() {
		return
	}
	defer c.rebuild.Unlock()
	if now < c.due.Load() {
		return
	}
	c.due.Store(now + int64(hotRefresh))
	old := c.set.Load()
	top := c.traffic.hottest()
	n := min(len(top), c.size)
	size := 1
	for size < 2*n {
		size <<= 1
	}
	s := &hotSet{entries: make([]*hotEntry, 0, n), table: make([]int32, size), mask: uint64(size - 1)}
	for _, k := range top {
		if len(s.entries) == n {
			break
		}
		if k.long {
			continue // the summary kept the key's first bytes only
		}
		key := []byte(k.key)
		h := trace.SampleHashBytes(key)
		e := old.find(key, h)
		if e == nil {
			e = &hotEntry{key: key, hash: h}
		}
		j := h & s.mask
		for s.table[j] != 0 {
			j = (j + 1) & s.mask
		}
		s.entries = append(s.entries, e)
		s.table[j] = int32(len(s.entries))
	}
	c.set.Store(s)
}

// read looks key up for a read that came at now, routed by pl to from:
// it returns the value to answer, or, for a cached key with none, the
// ticket with which to store the reply of the read sent to the server
// (its entry nil for a key not cached).
//
// A value past half its staleness is refreshed ahead: the one read that
// claims its entry's refresh goes to the server, the others are answered
// from the value, which is still fresh enough. So a hot key's value does
// not lapse under load, and its server sees one read of it each half
// staleness - rather than, each staleness, every read that comes while
// the first one after it lapsed is on its way (a pipelined client's
// batch of them).
func (c *hotCache) read(key []byte, pl *placement, from *backend, now int64) ([]byte, hotTicket) {
	if !pl.steady() {
		return nil, hotTicket{}
	}
	e := c.lookup(key, now)
	if e == nil {
		return nil, hotTicket{}
	}
	if v := c.answer(e, pl, from, now); v != nil {
		old := c.staleness > 0 && now-e.val.Load().born > c.staleness/2
		if !old || !e.filling.CompareAndSwap(false, true) {
			c.hits.Add(1)
			return v, hotTicket{}
		}
		t := c.ticket(e, pl, from, now)
		t.refresh = true
		c.misses.Add(1)
		return nil, t
	}
	c.misses.Add(1)
	return nil, c.ticket(e, pl, from, now)
}

// answer returns the value of e to answer a read that came at now under
// the placement pl, which routes it to from, or nil when it has none:
// none stored, invalidated, read under another placement or from another
// server (a kolco distribution passes over a server marked down without a
// new placement), or older than the staleness allowed.
func (c *hotCache) answer(e *hotEntry, pl *placement, from *backend, now int64) []byte {
	v := e.val.Load()
	if v == nil || v.gen != e.gen.Load() || v.epoch != c.epoch.Load() || v.place != pl || v.from != from ||
		(c.staleness > 0 && now-v.born > c.staleness) {
		return nil
	}
	return v.reply
}

// hotTicket is what a read that is to store its reply in the cache
// notes as it is sent: the entry, its generation and the cache's epoch
// then, the placement it is routed by, its server and when.
type hotTicket struct {
	e     *hotEntry
	gen   uint64
	epoch uint64
	place *placement
	from  *backend
	born  int64
	// refresh is set for the read that claimed its entry's refresh: its
	// end, stored or not, lets another claim it.
	refresh bool
}

// ticket returns the ticket of a read of e sent at now to from under pl.
func (c *hotCache) ticket(e *hotEntry, pl *placement, from *backend, now int64) hotTicket {
	return hotTicket{e: e, gen: e.gen.Load(), epoch: c.epoch.Load(), place: pl, from: from, born: now}
}

// track returns the ticket of a read of key that came at now, routed by pl
// to from, and whether the key is cached: for a front whose values are
// answered once confirmed (see redis_hotkeys.go).
func (c *hotCache) track(key []byte, pl *placement, from *backend, now int64) (hotTicket, bool) {
	e := c.lookup(key, now)
	if e == nil {
		return hotTicket{}, false
	}
	return c.ticket(e, pl, from, now), true
}

// valid returns the value that answers the read of ticket t now, or nil
// (see answer).
func (c *hotCache) valid(t hotTicket) []byte { return c.answer(t.e, t.place, t.from, t.born) }

// renew returns the ticket of a read of t's key sent at now.
func (c *hotCache) renew(t hotTicket, now int64) hotTicket {
	return c.ticket(t.e, t.place, t.from, now)
}

// served counts a read of a cached key: answered from the cache (hit), or
// by its server.
func (c *hotCache) served(hit bool) {
	if hit {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
}

// key returns the key of t.
func (t hotTicket) key() []byte { return t.e.key }

// sameKey reports whether t and o are tickets of the same key.
func (t hotTicket) sameKey(o hotTicket) bool { return t.e == o.e }

// store keeps reply, the reply to the read of ticket t, as the entry's
// value, copied; a value of a generation or epoch that has passed since
// the read was sent is never answered, so it is not stored, nor is a nil
// reply (a read that failed), which only ends a refresh.
func (c *hotCache) store(t hotTicket, reply []byte) {
	if t.e == nil {
		return
	}
	if t.refresh {
		defer t.e.filling.Store(false)
	}
	if reply == nil || t.e.gen.Load() != t.gen || c.epoch.Load() != t.epoch {
		return
	}
	t.e.val.Store(&hotValue{reply: bytes.Clone(reply), place: t.place, from: t.from, born: t.born, gen: t.gen, epoch: t.epoch})
	c.fills.Add(1)
}

// invalidate drops the value of key, if it is cached.
func (c *hotCache) invalidate(key []byte) {
	if e := c.set.Load().find(key, trace.SampleHashBytes(key)); e != nil {
		e.gen.Add(1)
		c.invalidations.Add(1)
	}
}

// invalidateAll drops every value.
func (c *hotCache) invalidateAll() {
	c.epoch.Add(1)
	c.invalidations.Add(1)
}

// cached returns the keys cached now, hottest first.
func (c *hotCache) cached() []string {
	s := c.set.Load()
	out := make([]string, 0, len(s.entries))
	for _, e := range s.entries {
		out = append(out, string(e.key))
	}
	return out
}

// hottest returns the hottest keys by requests.
func (t *trafficSample) hottest() []hotKey {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byReqs.top()
}
