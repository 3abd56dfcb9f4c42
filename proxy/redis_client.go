package proxy

import (
	"bufio"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// redisClient serves one client connection of a Redis pool, on one
// goroutine, in rounds as nutcracker's event loop serves it: it reads the
// requests the client has sent (all that are buffered, up to
// max_pending), queues each on its servers' connections, writes each
// connection's queue once (see flushBatch), then writes the replies in
// request order, in one write.
//
// The memcached client's reader and writer goroutines let replies flow
// while requests still come in; here a round's replies wait for its last
// request to be read whole. That costs a client nothing that waits for its
// replies (redis-benchmark, pipelines), and saves the hand-over of every
// request to a writer: a goroutine parked and woken, two channel
// operations.
type redisClient struct {
	*client
	free sync.Pool // *redisRequest, reused once written
	// authed is set once the client gave the pool's password, or from
	// the start when there is none.
	authed bool
	// cs is what its connection commands set: the protocol it speaks,
	// its name (see redis_conn.go).
	cs redisConnState
	// err is the read error that ended the client's requests, nil when
	// it quit, was drained or its connection had to be closed.
	err error
	// wrote are the shards the client wrote to, by server name, with
	// replica reads on: it reads them from their primaries.
	wrote wroteShards
	// batch holds the server connections the round's requests were
	// queued on: each is written once, when the round is read.
	batch flushBatch
	// charge is what the client's requests and replies in flight hold
	// (see charge and redisBudget).
	charge *charge
	// round holds the requests read and not yet answered, in order, and
	// w buffers their replies; gone is set once a reply could not be
	// written.
	round []*redisRequest
	w     *bufio.Writer
	gone  bool

	// tx is the client's transaction (see redisTx), subs its
	// subscriptions while it is subscribed (see redisSubs).
	tx   redisTx
	subs *redisSubs

	// The reader's routing state: the placement a request is split by,
	// and serverOf bound once, so that splitting allocates nothing.
	place    *placement
	none     int // the server index of a key no server is live for
	route    routeScratch
	serverOf func(key []byte) int
	// fromSource, when set, is the copy of a big key whose old server
	// the request being routed reads it from (see keyCopy.await).
	fromSource *keyCopy
}

// serve serves a client of a Redis pool.
func (redisFront) serve(c *client) { newRedisClient(c).serve() }

func newRedisClient(cl *client) *redisClient {
	p := cl.pool.Load()
	c := &redisClient{client: cl, authed: p.cfg.clientPassword() == "", cs: newRedisConnState(cl), charge: newCharge(cl.budget, p.cfg)}
	if len(cl.connState) > 0 {
		c.authed = c.cs.handedFrom(cl.connState) || c.authed
		cl.connState = nil
	}
	c.free.New = func() any { return newRedisRequest() }
	c.serverOf = c.server
	return c
}

// serve serves a client of a Redis pool until it closes, quits or is
// drained.
func (c *redisClient) serve() {
	p := c.pool.Load()
	// A request read in part waits for the rest: what the round has
	// queued is written first.
	in, out := c.streams(p, c.batch.flush)
	unread, written := c.rounds(in, out)
	if c.err == errDrained {
		c.connState = c.cs.handedTo(c.authed && c.pool.Load().cfg.clientPassword() != "")
	}
	c.tx.closePin()
	c.ended(p, in, out, c.err, written, unread)
}

// limits are the request limits of the client: the pool's largest value,
// within the server's own limit, and before the client authenticates
// what redis-server allows then.
func (c *redisClient) limits(p *pool) redis.Limits {
	return redis.Limits{MaxBulk: min(p.cfg.MaxValueSize, redis.DefaultMaxBulk), Unauthenticated: !c.authed,
		Budget: redisBudget{c: c.charge, endRound: c.endRound}}
}

// rounds serves rounds of requests, read from in and answered on out,
// until the client closes, sends bytes that end the stream, asks to quit,
// is drained or the server shuts down; it reports false when a reply
// could not be written, and after a drain returns what the client sent
// that was not read (c.err is then errDrained). A round ends when the client has sent nothing
// more yet, at max_pending requests or client_buffer_limit, or when a
// request waits for room in kolco.buffer_limit (see redisBudget).
func (c *redisClient) rounds(in io.Reader, out io.Writer) (unread []byte, written bool) {
	c.w = bufio.NewWriterSize(out, 16<<10)
	r := redis.NewReader(in, c.limits(c.pool.Load()))
	for {
		var rq *redisRequest
		drained := !c.next(r)
		end := drained
		switch {
		case drained && (c.tx.multi || c.tx.watched != nil):
			// Its transaction cannot go with it to another process:
			// closed, the client's next request fails where no
			// transaction of it ran.
			c.err = errTxDrained
		case drained:
			c.err, unread = errDrained, r.Unread()
		default:
			rq, end = c.read(r)
		}
		if rq != nil {
			c.round = append(c.round, rq)
		}
		if c.subs != nil {
			// Subscribed: the round is answered under the lock of the
			// messages' writes, and the client served as a subscriber.
			c.subs.mu.Lock()
			ok := c.endRound()
			c.subs.mu.Unlock()
			if !ok || end || !c.subscribed(r) {
				return nil, ok
			}
			continue
		}
		if !end && !c.gone && r.Buffered() > 0 && len(c.round) < c.pool.Load().cfg.MaxPending && c.charge.held.Load() < c.charge.limit {
			continue
		}
		if !c.endRound() {
			return nil, false
		}
		if end {
			return unread, true
		}
	}
}

// endRound answers the round's requests and starts a new round; it
// reports false when a reply could not be written, then and ever after.
func (c *redisClient) endRound() bool {
	ok := c.answer(c.w, c.round) && !c.gone
	clear(c.round)
	c.round = c.round[:0]
	c.gone = !ok
	return ok
}

// read reads and dispatches the next request; end reports that the
// connection is to be closed after it, or at once when rq is nil.
func (c *redisClient) read(r *redis.Reader) (rq *redisRequest, end bool) {
	rq = c.free.Get().(*redisRequest)
	err := r.Read(&rq.req)
	pool, ok := c.intake(rq, c.charge, err)
	switch {
	case !ok:
		c.free.Put(rq)
		c.err = err
		return nil, true
	case pool != nil:
		c.dispatch(pool, rq, r)
	case c.tx.multi:
		c.tx.failed = true // refused while queued: an unknown command, a wrong arity
	}
	return rq, rq.close
}

// The commands the client's reader treats apart, looked up once.
var (
	redisAuth = redis.Lookup("auth")
	redisQuit = redis.Lookup("quit")
)

// dispatch starts serving one parsed request: it answers what the proxy
// answers itself (AUTH, PING, ECHO, QUIT, SELECT, HELLO, and -NOAUTH
// before the client authenticates, as nutcracker with redis_auth) and
// sends the rest to the servers its keys are on. What a cluster's client
// is answered (see redis_cluster.go) is asked only of a pool that answers
// cluster clients, so that a plain pool's request runs none of it.
func (c *redisClient) dispatch(p *pool, r *redisRequest, rd *redis.Reader) {
	r.pool, r.start, r.dialect = p, time.Now(), dialectOf[c.cs.proto]
	req := &r.req
	cluster := p.cfg.RedisCluster.Enabled
	var moved []byte
	if cluster {
		moved = c.cs.moved(p, req)
	}
	switch {
	case moved != nil && c.authed:
		// A leaving proxy's MOVED; queued, it fails the transaction, as
		// a cluster's does.
		r.local = append(r.local, moved...)
		c.tx.failed = c.tx.failed || c.tx.multi
	case req.Cmd == cmdHello && !c.tx.multi:
		if c.cs.hello(p, r, c.authed) && !c.authed {
			c.authed = true
			rd.SetLimits(c.limits(p))
		}
	case req.Cmd == redisAuth:
		var ok bool
		if r.local, ok = appendAuthReply(r.local, req, p.cfg.clientPassword()); ok && !c.authed {
			c.authed = true
			rd.SetLimits(c.limits(p))
		}
	case !c.authed && req.Cmd != redisQuit:
		r.local = append(r.local, ncNoAuth...)
	case req.Cmd.Class() == redis.ClassTransaction || c.tx.multi && req.Cmd != redisQuit:
		// A transaction command, or any command between MULTI and EXEC
		// but QUIT: the transaction's (see redis_tx.go).
		c.transaction(p, r)
	case req.Cmd.Class() == redis.ClassBlocking:
		if !c.block(p, r, rd) {
			return // a server answers
		}
	case req.Cmd.Class() == redis.ClassEveryServer:
		c.every(p, r)
	case req.Cmd.Class() == redis.ClassPubSub:
		if !c.pubsub(p, r) {
			return // a server answers
		}
	case req.Cmd == cmdClient:
		r.local = c.cs.command(r.local, req.Args)
	case cluster && clusterCommand(req.Cmd):
		r.local = c.cs.cluster(p).answer(r.local, req, c.cs.proto)
	case req.Cmd.Class() == redis.ClassLocal:
		r.local, r.close = redis.AppendLocal(r.local, req)
	case p.cfg.MaxKeys > 0 && req.NumKeys() > p.cfg.MaxKeys:
		r.local = redis.AppendError(r.local, fmt.Sprintf("ERR %d keys in one request, over the proxy's max_keys %d", req.NumKeys(), p.cfg.MaxKeys))
	default:
		c.forward(p, r)
		return
	}
	r.ready()
}

// forward splits a request by the servers its keys are on (see
// redis.Splitter) and sends each part to its server. A command that cannot
// be split whose keys are on several servers is refused, as are the
// commands no proxy can serve.
func (c *redisClient) forward(p *pool, r *redisRequest) {
	if p.hot != nil && p.hot.front != nil && p.hot.front.(*redisHot).get(p, r, &c.route) {
		return // the server's tracker answers it
	}
	if p.outages.keeps && !r.req.Cmd.ReadOnly() && r.req.NumKeys() > 0 {
		// Before it is routed: a server coming back settles what
		// writes routed around it wrote (see outage).
		r.guardWrite(p, c.batch.flush, r.req.NumKeys(), r.req.Key)
	}
	c.place, c.none = p.place.Load(), len(p.backends)
	if m := c.place.move; m != nil && r.req.NumKeys() > 0 {
		answered, err := c.moveKeys(p, r, m)
		if err != nil {
			r.local = redis.AppendError(r.local, "TRYAGAIN "+tryAgainCause(err))
		}
		if answered || err != nil {
			r.ready()
			return
		}
		if c.fromSource != nil {
			defer func() { // answered before it was sent
				if kc := c.fromSource; kc != nil {
					c.fromSource = nil
					kc.release()
				}
			}()
		}
	}
	if err := r.split.Split(&r.req, c.serverOf); err != nil {
		if re, ok := err.(*redis.Error); ok {
			r.local = append(r.local, re.Reply...)
		} else {
			r.answerError(err)
		}
		r.ready()
		return
	}
	parts := r.split.Parts()
	if r.req.Size() > byRef && c.chargeCopies(r, len(parts)) != nil { // only an argument over byRef is copied
		r.local = redis.AppendError(r.local, "OOM the proxy has no room for the request")
		r.ready()
		return
	}
	deadline := r.start.Add(p.cfg.Timeout)
	for i := range parts {
		o := r.addOp(deadline)
		o.buf, o.data, o.tail = r.split.AppendPartRef(o.buf[:0], o.tail, i, byRef)
		o.batch = &c.batch  // written at the round's end
		o.charge = c.charge // its reply's bulk strings are charged
	}
	r.left.Store(int32(len(parts)))
	if kc := c.fromSource; kc != nil && len(parts) == 1 {
		c.fromSource = nil
		r.ops[0].fallback = nil // no replica's primary: the key's old server answers
		kc.sendRead(r.ops[0])
		return
	}
	c.send(p, r, parts)
}

// send sends the parts of r, split and routed, each to its server: after
// the stand-ins' old copies of the keys of a read are removed while a
// server is out (see outages.fenceReads) - once the split has routed them,
// so that a server marked down since has its outage open.
func (c *redisClient) send(p *pool, r *redisRequest, parts []redis.Part) {
	if r.req.Cmd.ReadOnly() && p.outages.count.Load() != 0 {
		if err := p.outages.fenceReads(c.place, r.req.NumKeys(), r.req.Key, c.batch.flush); err != nil {
			for i := range parts {
				r.ops[i].fallback = nil // not sent anywhere: no replica's primary
				r.ops[i].finish(err)
			}
			return
		}
	}
	for i, part := range parts {
		var b *backend
		r.ops[i].fallback = nil
		switch {
		case part.Server == redis.AnyServer:
			b = anyServer(p.backends)
		case part.Server < len(p.backends):
			b = p.backends[part.Server]
			if p.cfg.ReplicaReads.Enabled {
				b = c.wrote.server(p, r, b)
				r.ops[i].fallback = b.replicaOf
			}
		}
		if b == nil {
			r.ops[i].finish(ErrNoServers)
			continue
		}
		b.send(r.ops[i])
	}
}

// A request whose argument was passed by reference (over byRef bytes) is
// never read into again while a write may still read it: a Request drops
// a buffer over redis.KeepMax once done.
var _ [byRef - redis.KeepMax]struct{}

// server returns the index of the server that owns key, or c.none when no
// server is live. It is the Splitter's function from key to server.
func (c *redisClient) server(key []byte) int {
	owners := c.place.route(key, false, &c.route)
	if len(owners) == 0 {
		return c.none
	}
	return owners[0].index
}

// anyServer returns a server for a command that touches no key (COMMAND):
// the first of backends that is not marked down, or nil.
func anyServer(backends []*backend) *backend {
	for _, b := range backends {
		if !b.health.isDown() {
			return b
		}
	}
	return nil
}

// redisRequest is one Redis request on its way: the request, how it
// splits over servers, and its call (the ops sent for it).
type redisRequest struct {
	call
	req   redis.Request
	split redis.Splitter
	// dialect is the kind of server connection its ops go on: its
	// client's protocol's (see redisDialects).
	dialect uint8
	newOp   func() *op // bound once: ops of the request's own
	// notes is scratch for the pool's traffic sample (see
	// redis_traffic.go).
	notes []trafficNote
	// hot is set when the pool's hot-key cache took the request (see
	// redis_hotkeys.go).
	hot bool

	// Scratch space, so that merging allocates nothing.
	replies []redis.Reply
	merged  []byte
}

func newRedisRequest() *redisRequest {
	r := &redisRequest{call: newCall()}
	r.newOp = func() *op { return &newRedisOp(r.opDone).op }
	return r
}

// requestError makes r's reply the reply to err, an error in the request,
// if it is one.
func (r *redisRequest) requestError(err error) bool {
	re, ok := err.(*redis.Error)
	if ok {
		r.local = append(r.local[:0], re.Reply...)
		r.close = re.Close
	}
	return ok
}

// answerError makes r's reply the error reply of err.
func (r *redisRequest) answerError(err error) {
	r.local = appendRedisError(r.local[:0], err)
}

// addOp returns a reusable op of r, due by deadline.
func (r *redisRequest) addOp(deadline time.Time) *redisOp {
	o := redisOf(r.nextOp(r.newOp))
	o.deadline, o.dialect = deadline, r.dialect
	return o
}

// reset makes r ready for the next request, keeping its buffers.
func (r *redisRequest) reset() {
	for _, o := range r.ops {
		ro := redisOf(o)
		o.reply, ro.elems, o.err, o.buf, o.data, o.tail = trim(o.reply), ro.elems[:0], nil, trim(o.buf), nil, trim(o.tail)
		o.held, o.small = 0, 0
	}
	r.req.Trim()
	r.call.reset()
	r.local = r.local[:0]
	r.hot = false
}

// redisOp is an op of the Redis front: the engine's op, and where the
// elements of its reply lie when it is an array.
type redisOp struct {
	op
	elems []redis.Span
	// skip is how many replies the server sends before the one kept, read
	// and dropped: those of a transaction's MULTI and queued commands
	// (see readOld).
	skip int
}

// newRedisOp returns an op of the Redis front that calls done when done.
func newRedisOp(done func(*op)) *redisOp {
	r := &redisOp{}
	r.op.front, r.op.done = r, done
	return r
}

// redisOf returns the Redis op that holds o.
func redisOf(o *op) *redisOp { return o.front.(*redisOp) }

// nutcracker's replies to a client's AUTH, and to a request before it,
// which scripts and alerts written for nutcracker match on; redis-server
// words them otherwise ("-NOAUTH Authentication required.", "-WRONGPASS
// ...").
const (
	ncNoAuth     = "-NOAUTH Authentication required\r\n"
	ncNoPassword = "-ERR Client sent AUTH, but no password is set\r\n"
	ncWrongPass  = "-ERR invalid password\r\n"
)

// appendAuthReply appends the reply to AUTH for a pool whose clients give
// password (none when empty), and reports whether the client is now
// authenticated: nutcracker's replies to "AUTH password", and
// redis-server's to "AUTH user password", which nutcracker answers by
// closing the connection.
func appendAuthReply(dst []byte, req *redis.Request, password string) ([]byte, bool) {
	if len(req.Args) != 2 {
		return redis.AppendAuth(dst, req, password)
	}
	if password == "" {
		return append(dst, ncNoPassword...), false
	}
	if out, ok := redis.AppendAuth(dst, req, password); ok {
		return out, true
	}
	return append(dst, ncWrongPass...), false
}
