package proxy

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// A Redis pool's hot-key cache (see pool_hotkeys.go) is kept fresh by its
// servers: each server's tracker holds two connections of its own to it,
// a subscriber to __redis__:invalidate, and a reader whose GETs fill the
// cache and whose CLIENT TRACKING redirects the invalidations of the keys
// it read to that subscriber - RESP2's redirect rather than RESP3's push:
// the pool's own connections speak RESP2 to servers and clients alike,
// and a connection of the tracker's own is told apart from theirs,
// tracks only the keys it fills, and is closed, with every value, when it
// fails.
//
// An invalidation comes on the subscriber and the reply of the read on
// the pool's connection: two streams, in no order between them. So a
// value alone is not linearizable - a write another client had seen
// acknowledged could have its invalidation still on its way as a read
// came. A read of a cached key therefore waits for the reply to a PING
// sent on the subscriber after the read came (Raft's read index, on the
// server's own stream): the server answers it after every invalidation
// it sent before, so a write done before the read came has dropped its
// value by then. Reads that come while a PING is out wait for the next
// one, so a server sees one PING a round trip whatever the reads, and
// while reads keep coming, at most one each redisPingEvery. The value is
// then answered if it still stands, else one GET per key of the round,
// sent then, answers its reads and is stored - unless its key was
// invalidated between the GET and its reply, whose generation then has
// passed. A read of a key with no value does not wait: its GET, sent
// after it came, answers it.
//
// A server that refuses CLIENT TRACKING (Redis before 6, or the command
// renamed away) keeps its keys uncached, and the pool logs it once; a
// tracker whose connection fails answers its waiting reads with the
// error, drops every value and connects again after a second.

// redisPingEvery is the least time between two PINGs to a server while
// reads keep coming. At one a round trip, a server's PINGs followed how
// often reads of its cached keys found none out: the hottest server,
// whose cached keys are read all the time, had a PING each round trip
// where the others had gaps - under Zipf 1.2 over ten servers
// (TestHotKeysRedisBalanceZipf), 4 090 PINGs against a mean of 3 441, a
// third of what the servers served, which made the busiest 1.08-1.13
// times the mean. The reads that came while a PING was out now wait for
// the next one until a millisecond has passed since it was sent, so that
// every server whose cached keys are read that often sees the same PINGs
// (2 098-2 234 there) and fewer of them; a read that finds none out and
// none waiting is sent one at once, so that a client reading one key
// after another waits for a round trip as before, not for the interval.
// What the bound costs is up to a millisecond more for a read of a cached
// key under steady reads.
const redisPingEvery = time.Millisecond

// redisGet is GET, the one command the cache answers.
var redisGet = redis.Lookup("get")

// redisPing is a PING, made once: a conversion of each would allocate.
var redisPing = []byte("*1\r\n$4\r\nPING\r\n")

// redisHot is a Redis pool's trackers, one per server, by its index.
type redisHot struct {
	trackers []*redisTracker
}

// startRedisHot starts the trackers of p's hot-key cache, which they
// keep until ctx ends.
func startRedisHot(ctx context.Context, p *pool) {
	h := &redisHot{}
	for _, b := range p.backends {
		t := &redisTracker{c: p.hot, b: b}
		t.later = time.AfterFunc(time.Hour, t.pingLater)
		t.later.Stop()
		h.trackers = append(h.trackers, t)
		p.wg.Go(func() {
			defer t.later.Stop()
			t.run(ctx)
		})
	}
	p.hot.front = h
}

// untracked returns the servers whose keys are not cached now.
func (h *redisHot) untracked() []string {
	var out []string
	for _, t := range h.trackers {
		t.mu.Lock()
		if !t.ready {
			out = append(out, t.b.name())
		}
		t.mu.Unlock()
	}
	return out
}

// get takes r, a GET, to answer from the cache when its key is cached and
// its server tracked, and reports whether it did: r is then answered by
// the server's tracker.
func (h *redisHot) get(p *pool, r *redisRequest, sc *routeScratch) bool {
	if r.req.Cmd != redisGet || r.req.NumKeys() != 1 {
		return false
	}
	pl := p.place.Load()
	if !pl.steady() {
		return false
	}
	key := r.req.Key(0)
	owners := pl.route(key, false, sc)
	if len(owners) == 0 || owners[0].slot >= len(h.trackers) {
		return false
	}
	t := h.trackers[owners[0].slot]
	if t.b != owners[0] {
		return false
	}
	tk, cached := p.hot.track(key, pl, t.b, r.start.UnixNano())
	return cached && t.await(r, tk)
}

// redisTracker follows one server's invalidations for the cache.
type redisTracker struct {
	c *hotCache
	b *backend

	mu sync.Mutex // guards what follows
	// sub and data are the subscriber and the tracked reader, ready once
	// both are set up.
	sub, data net.Conn
	ready     bool
	// waiting are the reads that came since the PING out was sent, and
	// pinged those that came before it; pingOut is set while one is.
	waiting, pinged []redisWaiter
	pingOut         bool
	// pingedAt is when the last PING was sent; later sends the next
	// one once redisPingEvery has passed since, while laterSet.
	pingedAt time.Time
	later    *time.Timer
	laterSet bool
	// fills are the GETs sent on data, oldest first, each with the
	// ticket of its key; sent and got count the GETs sent and answered,
	// and filled are the reads each answers, by its count, oldest first.
	fills     []hotTicket
	sent, got uint64
	filled    []redisWaiter
	wbuf      []byte // a GET's encoding
}

// redisWaiter is a read waiting for the tracker: the request, the ticket
// of its key, and for a read waiting on a GET, the GET's count.
type redisWaiter struct {
	r    *redisRequest
	t    hotTicket
	fill uint64
}

// await takes r, a read of the key of ticket tk, to answer once the
// server confirms the cached value, or by a GET sent now when there is
// none; it reports false when the server is not tracked.
func (t *redisTracker) await(r *redisRequest, tk hotTicket) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.ready {
		return false
	}
	r.hot = true
	r.left.Store(1)
	w := redisWaiter{r: r, t: tk}
	if t.c.valid(tk) == nil {
		t.fill(w, len(t.fills))
		return true
	}
	t.waiting = append(t.waiting, w)
	if !t.pingOut && !t.laterSet {
		t.ping() // the server has no read to confirm: this one waits for nothing else
	}
	return true
}

// pingSoon sends a PING for the reads that came while the last one was
// out, once redisPingEvery has passed since it was sent; the mutex is
// held.
func (t *redisTracker) pingSoon() {
	since := time.Since(t.pingedAt)
	if since >= redisPingEvery {
		t.ping()
		return
	}
	t.laterSet = true
	t.later.Reset(redisPingEvery - since)
}

// pingLater sends the PING pingSoon put off.
func (t *redisTracker) pingLater() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.laterSet = false
	if t.ready && !t.pingOut && len(t.waiting) > 0 {
		t.ping()
	}
}

// ping sends a PING on the subscriber for the reads waiting; the mutex is
// held.
func (t *redisTracker) ping() {
	t.pinged, t.waiting = t.waiting, t.pinged[:0]
	t.pingOut, t.pingedAt = true, time.Now()
	_ = t.sub.SetReadDeadline(time.Now().Add(t.b.pool.cfg.Timeout))
	if _, err := t.sub.Write(redisPing); err != nil {
		t.sub.Close() // the subscriber's reader fails the tracker
	}
}

// fill sends a GET of w's key on data, which answers w, unless a GET of
// the key among fills[from:], sent since w came, answers it already. The
// mutex is held.
func (t *redisTracker) fill(w redisWaiter, from int) {
	for i := from; i < len(t.fills); i++ {
		if t.fills[i].sameKey(w.t) {
			w.fill = t.got + uint64(i) + 1
			t.filled = append(t.filled, w)
			return
		}
	}
	t.sent++
	w.fill = t.sent
	t.fills = append(t.fills, w.t)
	t.filled = append(t.filled, w)
	t.wbuf = redis.AppendArrayHeader(t.wbuf[:0], 2)
	t.wbuf = redis.AppendBulkString(t.wbuf, "GET")
	t.wbuf = redis.AppendBulk(t.wbuf, w.t.key())
	_ = t.data.SetReadDeadline(time.Now().Add(t.b.pool.cfg.Timeout))
	if _, err := t.data.Write(t.wbuf); err != nil {
		t.data.Close() // its reader fails the tracker
	}
}

// pong answers the reads the PING answered was sent for: from the value
// each key still holds, else by a GET of it sent now, one a key.
func (t *redisTracker) pong() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pingOut = false
	round, from := t.pinged, len(t.fills)
	born := time.Now().UnixNano()
	for _, w := range round {
		if v := t.c.valid(w.t); v != nil {
			t.c.served(true)
			answerRedisHot(w.r, v)
			continue
		}
		w.t = t.c.renew(w.t, born)
		t.fill(w, from)
	}
	clear(round)
	t.pinged = round[:0]
	if len(t.waiting) > 0 {
		t.pingSoon()
	} else {
		_ = t.sub.SetReadDeadline(time.Time{}) // invalidations come any time
	}
}

// filledReply answers the reads of the oldest GET with its reply, and
// stores the reply unless its key was invalidated since the GET was sent.
func (t *redisTracker) filledReply(reply []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.fills) == 0 {
		return
	}
	tk := t.fills[0]
	copy(t.fills, t.fills[1:])
	t.fills[len(t.fills)-1] = hotTicket{}
	t.fills = t.fills[:len(t.fills)-1]
	t.got++
	if !redis.IsError(reply) {
		t.c.store(tk, reply)
	}
	// A read that shares an earlier GET of its round is listed after the
	// reads of later GETs: every read of this GET is answered, in place.
	kept := t.filled[:0]
	for _, w := range t.filled {
		if w.fill != t.got {
			kept = append(kept, w)
			continue
		}
		t.c.served(false)
		answerRedisHot(w.r, reply)
	}
	clear(t.filled[len(kept):])
	t.filled = kept
	if len(t.fills) == 0 {
		_ = t.data.SetReadDeadline(time.Time{})
	}
}

// answerRedisHot answers r, a read the tracker took, with reply.
func answerRedisHot(r *redisRequest, reply []byte) {
	r.local = append(r.local[:0], reply...)
	r.opDone(nil)
}
