package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
// one, so a server sees one PING a round trip whatever the reads. The
// value is then answered if it still stands, else one GET per key of the
// round, sent then, answers its reads and is stored - unless its key was
// invalidated between the GET and its reply, whose generation then has
// passed. A read of a key with no value does not wait: its GET, sent
// after it came, answers it.
//
// A server that refuses CLIENT TRACKING (Redis before 6, or the command
// renamed away) keeps its keys uncached, and the pool logs it once; a
// tracker whose connection fails answers its waiting reads with the
// error, drops every value and connects again after a second.

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
		h.trackers = append(h.trackers, t)
		p.wg.Go(func() { t.run(ctx) })
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
	if !t.pingOut {
		t.ping()
	}
	return true
}

// ping sends a PING on the subscriber for the reads waiting; the mutex is
// held.
func (t *redisTracker) ping() {
	t.pinged, t.waiting = t.waiting, t.pinged[:0]
	t.pingOut = true
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
		t.ping()
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

// run keeps the server tracked until ctx ends: it connects, serves the
// connections until one fails, and connects again a second later,
// logging a loss once rather than each try; a server that refuses
// tracking is left untracked.
func (t *redisTracker) run(ctx context.Context) {
	log := t.b.pool.log
	say := true // the next failure is logged
	for ctx.Err() == nil {
		err := t.connect(ctx)
		var refused *trackingRefused
		switch {
		case errors.As(err, &refused):
			log.Warn("hot keys: the server refuses CLIENT TRACKING, so its keys are not cached", "server", t.b.name(), "reply", refused.reply)
			return
		case err == nil:
			say = true
			err = t.serve(ctx)
		}
		t.fail(err)
		if ctx.Err() == nil && say {
			say = false
			log.Info("hot keys: the server's tracking connection failed: its keys are not cached until it is back", "server", t.b.name(), "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// trackingRefused is the error of a server that refuses tracking.
type trackingRefused struct{ reply string }

func (e *trackingRefused) Error() string { return "CLIENT TRACKING refused: " + e.reply }

// connect opens the subscriber and the tracked reader.
func (t *redisTracker) connect(ctx context.Context) error {
	sub, err := redisDial(ctx, t.b, redis.RESP2)
	if err != nil {
		return err
	}
	data, err := redisDial(ctx, t.b, redis.RESP2)
	if err != nil {
		sub.Close()
		return err
	}
	ok := false
	defer func() {
		if !ok {
			sub.Close()
			data.Close()
		}
	}()
	id, err := trackerAsk(sub, t.b, redisCommand("CLIENT", "ID"))
	if err != nil {
		return err
	}
	if redis.IsError(id) {
		return &trackingRefused{string(bytes.TrimSpace(id))}
	}
	n, isInt := redis.Integer(id)
	if !isInt {
		return fmt.Errorf("%w: CLIENT ID: %q", redis.ErrBadReply, id)
	}
	if reply, err := trackerAsk(sub, t.b, redisCommand("SUBSCRIBE", "__redis__:invalidate")); err != nil {
		return err
	} else if redis.IsError(reply) {
		return fmt.Errorf("SUBSCRIBE: %q", reply)
	}
	reply, err := trackerAsk(data, t.b, redisCommand("CLIENT", "TRACKING", "ON", "REDIRECT", fmt.Sprint(n)))
	if err != nil {
		return err
	}
	if !bytes.Equal(reply, []byte("+OK\r\n")) {
		return &trackingRefused{string(bytes.TrimSpace(reply))}
	}
	_ = sub.SetDeadline(time.Time{})
	_ = data.SetDeadline(time.Time{})
	t.mu.Lock()
	t.sub, t.data, t.ready = sub, data, true
	t.mu.Unlock()
	ok = true
	return nil
}

// trackerAsk sends req on conn and reads its reply, an error reply
// included, within the pool's timeout. Nothing else is to come on conn
// meanwhile: the reader it reads with is dropped.
func trackerAsk(conn net.Conn, b *backend, req []byte) ([]byte, error) {
	if err := conn.SetDeadline(time.Now().Add(b.pool.cfg.Timeout)); err != nil {
		return nil, err
	}
	if _, err := conn.Write(req); err != nil {
		return nil, err
	}
	reply, _, err := redis.NewReplyReader(conn, redis.ReplyLimits{MaxReply: 64 << 10}).Read(nil, nil)
	return reply, err
}

// redisCommand encodes a command of args.
func redisCommand(args ...string) []byte {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	return redis.AppendArgs(nil, b)
}

// serve reads both connections until one fails or ctx ends.
func (t *redisTracker) serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		t.sub.Close()
		t.data.Close()
	})
	defer stop()
	errs := make(chan error, 2)
	go func() { errs <- t.readData() }()
	err := t.readSub()
	t.data.Close()
	t.sub.Close()
	<-errs
	return err
}

// readSub reads the subscriber's stream: invalidations, and the replies
// to the PINGs.
func (t *redisTracker) readSub() error {
	rr := redis.NewReplyReader(t.sub, redis.ReplyLimits{})
	var reply []byte
	var elems []redis.Span
	for {
		var err error
		if reply, elems, err = rr.Read(reply[:0], elems[:0]); err != nil {
			return err
		}
		switch {
		case len(elems) == 2 && bytes.Equal(reply[elems[0].Start:elems[0].End], []byte("$4\r\npong\r\n")):
			t.pong()
		case len(elems) == 3 && bytes.Equal(reply[elems[0].Start:elems[0].End], []byte("$7\r\nmessage\r\n")):
			if err := t.invalidated(reply[elems[2].Start:elems[2].End]); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%w on the invalidation channel: %q", redis.ErrBadReply, reply)
		}
	}
}

// invalidated drops the values of the keys of an invalidation message, an
// array of keys, or of every key for a null (a flush).
func (t *redisTracker) invalidated(keys []byte) error {
	if bytes.HasPrefix(keys, []byte("*-1")) || bytes.HasPrefix(keys, []byte("$-1")) {
		t.c.invalidateAll()
		return nil
	}
	rr := redis.NewReplyReader(bytes.NewReader(keys), redis.ReplyLimits{})
	all, elems, err := rr.Read(nil, nil)
	if err != nil {
		return err
	}
	for _, e := range elems {
		key, isNil, ok := redis.Bulk(all[e.Start:e.End])
		if !ok || isNil {
			return fmt.Errorf("%w: an invalidation of %q", redis.ErrBadReply, all[e.Start:e.End])
		}
		t.c.invalidate(key)
	}
	return nil
}

// readData reads the replies to the GETs.
func (t *redisTracker) readData() error {
	rr := redis.NewReplyReader(t.data, redis.ReplyLimits{MaxReply: t.b.pool.cfg.MaxValueSize + 64})
	var reply []byte
	for {
		var err error
		if reply, _, err = rr.Read(reply[:0], nil); err != nil {
			return err
		}
		t.filledReply(reply)
	}
}

// fail stops tracking after err: every value is dropped, the reads
// waiting are answered with the error, and the connections closed.
func (t *redisTracker) fail(err error) {
	t.c.invalidateAll()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ready, t.pingOut = false, false
	if t.sub != nil {
		t.sub.Close()
		t.data.Close()
	}
	reply := redis.AppendError(nil, "ERR the proxy lost its connection to the server: "+fmt.Sprint(err))
	for _, list := range [][]redisWaiter{t.waiting, t.pinged, t.filled} {
		for _, w := range list {
			answerRedisHot(w.r, reply)
		}
	}
	t.waiting, t.pinged, t.filled, t.fills = nil, nil, nil, nil
	t.got = t.sent
}
