package proxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// Pub/sub (what a subscriber sees when the servers change: see
// redis_pubsub_watch.go): a channel is placed as a key, so that PUBLISH, sent to its
// channel's server, meets the subscribers there. A subscribed client gets
// server connections of its own, one per server it subscribes on: a
// channel's SUBSCRIBE (and a shard channel's SSUBSCRIBE) goes to the
// channel's server, a PSUBSCRIBE to every server, since a pattern may
// match a channel of any. Each server's messages are written to the client
// as the server sent them. The proxy answers each SUBSCRIBE with its own
// confirmation, counting the client's subscriptions over all servers, once
// the server has confirmed its own: a message published after the
// client's confirmation is delivered.
//
// The pub/sub commands, looked up once.
var (
	cmdSubscribe    = redis.Lookup("subscribe")
	cmdPSubscribe   = redis.Lookup("psubscribe")
	cmdSSubscribe   = redis.Lookup("ssubscribe")
	cmdUnsubscribe  = redis.Lookup("unsubscribe")
	cmdPUnsubscribe = redis.Lookup("punsubscribe")
	cmdSUnsubscribe = redis.Lookup("sunsubscribe")
	cmdPublish      = redis.Lookup("publish")
	cmdSPublish     = redis.Lookup("spublish")
	cmdPubSub       = redis.Lookup("pubsub")
)

// subKind is a kind of subscription: channels, patterns, shard channels.
type subKind int

const (
	subChannel subKind = iota
	subPattern
	subShard
)

// subNames are the confirmations' names by kind, subscribing and not.
var subNames = [3][2]string{{"unsubscribe", "subscribe"}, {"punsubscribe", "psubscribe"}, {"sunsubscribe", "ssubscribe"}}

// kindOf returns the kind of a (un)subscribe command, and whether it
// subscribes.
func kindOf(cmd *redis.Command) (subKind, bool) {
	switch cmd {
	case cmdSubscribe:
		return subChannel, true
	case cmdPSubscribe:
		return subPattern, true
	case cmdSSubscribe:
		return subShard, true
	case cmdUnsubscribe:
		return subChannel, false
	case cmdPUnsubscribe:
		return subPattern, false
	}
	return subShard, false
}

// redisSubs is a subscribed client's subscriptions and connections.
type redisSubs struct {
	c *redisClient
	p *pool // the pool the subscriptions were placed by
	// mu guards the writes to the client, by the client's goroutine and
	// each server connection's reader.
	mu sync.Mutex
	w  *bufio.Writer
	// subs are the client's subscriptions by kind and name, each with
	// the connections it is on; subsMu guards them, changed by the
	// client's goroutine and read by watch.
	subsMu sync.Mutex
	subs   [3]map[string][]*subConn
	conns  map[string]*subConn // by server address
	stop   chan struct{}
	wg     sync.WaitGroup
}

// subConn is a subscriber's connection to one server.
type subConn struct {
	b    *backend
	conn net.Conn
	acks chan []byte   // the server's confirmations
	dead chan struct{} // closed when its reader ends
}

// pubsub serves a pub/sub command outside subscribed mode: PUBLISH and
// SPUBLISH to the channel's server, PUBSUB over every server, and the
// first subscription, after which the client is subscribed (see
// subscribed). It reports false when r's reply comes from a server.
func (c *redisClient) pubsub(p *pool, r *redisRequest) bool {
	req := &r.req
	switch cmd := req.Cmd; cmd {
	case cmdPublish, cmdSPublish:
		b, err := c.keysServer(p, 1, func(int) []byte { return req.Args[1] })
		if err != nil {
			r.answerError(err)
			return true
		}
		c.sendWhole(p, r, b)
		return false
	case cmdPubSub:
		c.pubsubInfo(p, r)
		return true
	}
	kind, on := kindOf(req.Cmd)
	if !on {
		// Not subscribed: each confirmation counts none.
		r.local = appendSubReplies(r.local, subNames[kind][0], req.Args[1:], 0, c.cs.proto)
		return true
	}
	if !c.endRound() {
		r.answerError(errClientGone)
		return true
	}
	c.subs = &redisSubs{c: c, p: p, w: c.w, conns: map[string]*subConn{}, stop: make(chan struct{})}
	c.cs.subscribed(true)
	for i := range c.subs.subs {
		c.subs.subs[i] = map[string][]*subConn{}
	}
	c.subs.wg.Add(1)
	go c.subs.watch()
	c.subs.change(req)
	return true
}

// sendWhole sends r as it is to b, on the pool's connections, as forward
// sends a request of one part.
func (c *redisClient) sendWhole(p *pool, r *redisRequest, b *backend) {
	o := r.addOp(r.start.Add(p.cfg.Timeout))
	o.buf = redis.AppendRequest(o.buf[:0], &r.req)
	o.batch, o.charge, o.fallback = &c.batch, c.charge, nil
	r.left.Store(1)
	b.send(&o.op)
}

// appendSubReplies appends a confirmation for each name, or one with a nil
// name when there are none, each counting count.
func appendSubReplies(dst []byte, kind string, names [][]byte, count int, proto redis.Proto) []byte {
	if len(names) == 0 {
		return appendSubReply(dst, kind, nil, count, proto)
	}
	for _, n := range names {
		dst = appendSubReply(dst, kind, n, count, proto)
	}
	return dst
}

// appendSubReply appends one confirmation: kind, name (nil: a null),
// count; a push in RESP3, as redis-server sends it.
func appendSubReply(dst []byte, kind string, name []byte, count int, proto redis.Proto) []byte {
	dst = redis.AppendPushHeader(dst, 3, proto)
	dst = redis.AppendBulkString(dst, kind)
	if name == nil {
		dst = redis.AppendNull(dst, proto)
	} else {
		dst = redis.AppendBulk(dst, name)
	}
	return redis.AppendInt(dst, int64(count))
}

// subscribed serves the client while it is subscribed: the (un)subscribe
// commands, PING and QUIT, others refused as redis-server refuses them.
// It reports true when the client unsubscribed from everything and goes
// on as before, false when it is done.
func (c *redisClient) subscribed(rd *redis.Reader) bool {
	s := c.subs
	defer func() {
		s.close()
		c.subs = nil
		c.cs.subscribed(false)
	}()
	for s.count(subChannel)+s.count(subPattern)+s.count(subShard) > 0 {
		_ = c.conn.SetReadDeadline(time.Time{}) // a subscriber waits as long as it likes
		if c.drains.draining.Load() {
			c.err = errSubDrained
			return false
		}
		if err := rd.Wait(); err != nil {
			if c.err = err; c.drains.draining.Load() && isTimeout(err) {
				c.err = errSubDrained
			}
			return false
		}
		rq := c.free.Get().(*redisRequest)
		err := rd.Read(&rq.req)
		c.charge.release(c.charge.take())
		end := s.serve(rq, err)
		rq.req.Trim()
		c.free.Put(rq)
		if end {
			return false
		}
	}
	return true
}

// errSubDrained ends a subscriber that is drained: its subscriptions
// cannot go with it to another process, so its connection is closed and
// its client subscribes again.
var errSubDrained = errors.New("drained while subscribed")

// serve answers one request of a subscribed client; end reports that the
// client is done.
func (s *redisSubs) serve(rq *redisRequest, err error) (end bool) {
	var re *redis.Error
	switch {
	case errors.As(err, &re):
		return !s.write([]byte(re.Reply)) || re.Close
	case err != nil:
		s.c.err = err
		return true
	}
	req := &rq.req
	switch cmd := req.Cmd; {
	case cmd == redisQuit:
		s.write(redis.AppendOK(nil))
		return true
	case cmd == cmdPing && s.c.cs.proto == redis.RESP3:
		// RESP3 has pushes for the messages: PING answers as ever.
		reply, _ := redis.AppendLocal(nil, req)
		return !s.write(reply)
	case cmd == cmdPing:
		reply := redis.AppendArrayHeader(nil, 2)
		reply = redis.AppendBulkString(reply, "pong")
		arg := []byte{}
		if len(req.Args) > 1 {
			arg = req.Args[1]
		}
		return !s.write(redis.AppendBulk(reply, arg))
	case cmd.Class() == redis.ClassPubSub && cmd != cmdPublish && cmd != cmdSPublish && cmd != cmdPubSub:
		return !s.change(req)
	}
	return !s.write(redis.AppendError(nil, "ERR Can't execute '"+req.Cmd.Name()+
		"': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"))
}

// write writes b to the client; false when it could not.
func (s *redisSubs) write(b []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.w.Write(b); err != nil {
		return false
	}
	return s.w.Flush() == nil
}

// count returns the client's subscriptions of kind's family: shard
// channels, or channels and patterns, as redis-server counts them.
func (s *redisSubs) count(kind subKind) int {
	if kind == subShard {
		return len(s.subs[subShard])
	}
	return len(s.subs[subChannel]) + len(s.subs[subPattern])
}

// change serves a (un)subscribe request, one name at a time, each
// confirmed once its servers confirmed; false when the client is gone.
func (s *redisSubs) change(req *redis.Request) bool {
	kind, on := kindOf(req.Cmd)
	names := req.Args[1:]
	if !on && len(names) == 0 {
		for _, n := range slices.Sorted(maps.Keys(s.subs[kind])) {
			names = append(names, []byte(n))
		}
		if len(names) == 0 {
			return s.write(appendSubReply(nil, subNames[kind][0], nil, s.count(kind), s.c.cs.proto))
		}
	}
	for _, name := range names {
		var err error
		if on {
			err = s.subscribe(kind, name)
		} else {
			err = s.unsubscribe(kind, name)
		}
		reply := appendSubReply(nil, subNames[kind][b2i(on)], name, s.count(kind), s.c.cs.proto)
		if err != nil {
			reply = appendRedisError(nil, err)
		}
		if !s.write(reply) {
			return false
		}
		if err != nil && on {
			// Left open, the client would believe it has a
			// subscription it has not, and miss its messages silently:
			// it is closed instead, to subscribe again (see the gap in
			// redis_pubsub_watch.go).
			s.p.log.Info("a subscription failed: the client is closed, to subscribe again", "name", string(name), "err", err)
			s.c.conn.Close()
			return false
		}
	}
	return true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// subscribe subscribes name on its servers: its channel's, or every
// server for a pattern.
func (s *redisSubs) subscribe(kind subKind, name []byte) error {
	if _, ok := s.subs[kind][string(name)]; ok {
		return nil
	}
	p := s.c.pool.Load()
	var servers []*backend
	if kind == subPattern {
		servers = p.backends
	} else {
		b, err := s.c.keysServer(p, 1, func(int) []byte { return name })
		if err != nil {
			return err
		}
		servers = []*backend{b}
	}
	var on []*subConn
	for _, b := range servers {
		sc, err := s.conn(b)
		if err == nil {
			err = sc.ask(s.p.cfg.Timeout, subNames[kind][1], name)
		}
		if err != nil {
			return serverError(b.addr, "subscribe", err)
		}
		on = append(on, sc)
	}
	s.subsMu.Lock()
	s.subs[kind][string(name)] = on
	s.subsMu.Unlock()
	return nil
}

// unsubscribe lets go of name on the servers it is subscribed on.
func (s *redisSubs) unsubscribe(kind subKind, name []byte) error {
	on, ok := s.subs[kind][string(name)]
	if !ok {
		return nil
	}
	s.subsMu.Lock()
	delete(s.subs[kind], string(name))
	s.subsMu.Unlock()
	for _, sc := range on {
		if err := sc.ask(s.p.cfg.Timeout, subNames[kind][0], name); err != nil {
			return serverError(sc.b.addr, "unsubscribe", err)
		}
	}
	return nil
}

// ask sends a (un)subscribe of name and waits for its confirmation.
func (sc *subConn) ask(timeout time.Duration, cmd string, name []byte) error {
	if err := sc.conn.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	if _, err := sc.conn.Write(redis.AppendArgs(nil, [][]byte{[]byte(cmd), name})); err != nil {
		return err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-sc.acks:
		return nil
	case <-sc.dead:
		return net.ErrClosed
	case <-t.C:
		return fmt.Errorf("no confirmation of %s within the pool's timeout", cmd)
	}
}

// conn returns the subscriber's connection to b, opened now if it has
// none.
func (s *redisSubs) conn(b *backend) (*subConn, error) {
	if sc := s.conns[b.addr]; sc != nil {
		return sc, nil
	}
	conn, err := redisDial(context.Background(), b, s.c.cs.proto)
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	sc := &subConn{b: b, conn: conn, acks: make(chan []byte, 64), dead: make(chan struct{})}
	s.conns[b.addr] = sc
	s.wg.Add(1)
	go s.read(sc)
	return sc, nil
}

// read forwards the messages of a server to the client and its
// confirmations to ask, until the connection ends; a connection that ends
// while the client is subscribed closes the client (see the gap above).
func (s *redisSubs) read(sc *subConn) {
	defer s.wg.Done()
	defer close(sc.dead)
	rr := redis.NewReplyReader(sc.conn, redis.ReplyLimits{MaxBulk: s.p.cfg.MaxValueSize, RESP3: s.c.cs.proto == redis.RESP3})
	var buf []byte
	var elems []redis.Span
	for {
		reply, el, err := rr.Read(buf[:0], elems[:0])
		buf, elems = reply, el
		if err != nil {
			s.lost(sc, err)
			return
		}
		if len(el) > 0 && isSubAck(reply[el[0].Start:el[0].End]) {
			sc.acks <- nil
			continue
		}
		s.mu.Lock()
		_, err = s.w.Write(reply)
		if err == nil && rr.Buffered() == 0 {
			err = s.w.Flush()
		}
		s.mu.Unlock()
		if err != nil {
			s.lost(sc, err)
			return
		}
	}
}

// isSubAck reports whether an array's first element names a confirmation
// rather than a message.
func isSubAck(first []byte) bool {
	name, _, ok := redis.Bulk(first)
	return ok && bytes.HasSuffix(name, []byte("subscribe"))
}

// close closes the subscriber's server connections and waits for their
// readers and the watch to end.
func (s *redisSubs) close() {
	close(s.stop)
	for _, sc := range s.conns {
		sc.conn.Close()
	}
	s.wg.Wait()
}
