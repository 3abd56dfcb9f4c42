package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// The way in of a memcached request: a client's reader reads it, answers
// what the proxy answers itself (see mc_local.go), and sends the rest to
// the servers its keys are on; the way out - the servers' replies merged
// and written in order - is mc_reply.go, and the detour a request takes in
// a migration window is mc_warm.go.

// serve serves a client of a memcached pool.
func (memcacheFront) serve(c *client) { newMcClient(c).serve() }

// mcClient serves one client connection of a memcached pool with two
// goroutines: a reader that reads requests and sends them to their
// servers, and a writer that writes their replies in the order they were
// read, each as soon as it and those before it are done.
type mcClient struct {
	*client
	q      chan *mcRequest
	free   sync.Pool // *mcRequest, reused once written
	charge *charge
	batch  flushBatch
	gate   warmGate
}

func newMcClient(c *client) *mcClient {
	p := c.pool.Load()
	mc := &mcClient{client: c, q: make(chan *mcRequest, p.cfg.MaxPending), charge: newCharge(c.budget, p.cfg)}
	mc.charge.flush = mc.batch.flush
	mc.free.New = func() any { return newMcRequest(mc.charge, &mc.batch, &mc.gate) }
	return mc
}

// serve serves the client until it closes, quits or is drained.
func (c *mcClient) serve() {
	p := c.pool.Load()
	in, out := c.streams(p, c.batch.flush)
	var wg sync.WaitGroup
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		werr = c.writeLoop(out)
	}()
	unread, rerr := c.readLoop(in)
	close(c.q)
	wg.Wait()
	c.ended(p, in, out, rerr, werr == nil, unread)
}

// readLoop reads requests until the client closes, errs beyond resync,
// asks to quit, or the server shuts down; every request read is queued.
// It returns the read error that ended it, nil when the client quit or
// the connection had to be closed, errDrained with what the client sent
// that was not read when a drain ended it.
func (c *mcClient) readLoop(in io.Reader) ([]byte, error) {
	defer c.batch.flush() // what the last requests queued
	r := memcache.NewReader(in, c.limits())
	for {
		c.charge.wait()
		if !c.next(r) {
			return r.Unread(), errDrained
		}
		rq := c.free.Get().(*mcRequest)
		err := r.Read(&rq.req)
		pool, ok := c.intake(rq, c.charge, err)
		switch {
		case !ok:
			c.free.Put(rq)
			return nil, err
		case pool != nil:
			rq.dispatch(pool)
		}
		closing := rq.close // rq belongs to the writer once queued
		select {
		case c.q <- rq:
		default:
			// Full: the writer waits for the first requests' replies,
			// which must be written to their servers first.
			c.batch.flush()
			c.q <- rq
		}
		if closing {
			return nil, nil
		}
	}
}

// limits are the pool's, with no cap on a line of its own: a get of any
// number of keys is read, as memcached reads it, within the buffer limits.
func (c *mcClient) limits() memcache.Limits {
	cfg := c.pool.Load().cfg
	return memcache.Limits{MaxValue: cfg.MaxValueSize, MaxKeys: cfg.MaxKeys, MaxLine: math.MaxInt, Budget: c.charge}
}

// mcRequest is one memcached request on its way: the request, and its
// call (the ops sent for it).
type mcRequest struct {
	call
	req memcache.Request

	// charge is the client's, which the request's ops' replies are
	// charged to; batch is the client's reader's, for the writes of its
	// requests; gate is the client's: it orders its requests in a
	// migration window (see warmGate).
	charge *charge
	batch  *flushBatch
	gate   *warmGate

	// replicated marks a write sent to every replica of its key: the
	// reply is the first one that is not an error, in preference order.
	// copiesLeft counts its ops not done yet (see missedCopies).
	replicated bool
	copiesLeft atomic.Int32
	// split routes a retrieval of several keys, by the placement place;
	// serverOf, bound once, is its function from key to server.
	split    memcache.Splitter
	replies  []memcache.Reply // scratch for merging the parts' replies
	place    *placement
	serverOf func(key []byte) int
	route    routeScratch
	newOp    func() *op // bound once: ops of the request's own

	// warm is the request's state in a migration window (see mc_warm.go);
	// made the first time the request needs it, then kept.
	warm *warmState
	// notes is scratch for the pool's traffic sample (see mc_traffic.go).
	notes []trafficNote
	// hot is the request's part in the pool's hot-key cache (see
	// mc_hotkeys.go).
	hot mcHot
}

func newMcRequest(c *charge, b *flushBatch, g *warmGate) *mcRequest {
	r := &mcRequest{call: newCall(), charge: c, batch: b, gate: g}
	r.serverOf = r.server
	r.newOp = func() *op { return &newMcOp(r.opDone).op }
	return r
}

// opDone ends one op of the request: in a migration window, as the warm
// path says (see mc_warm.go); else as every call's.
func (r *mcRequest) opDone(o *op) {
	if o != nil && mcOf(o).role != 0 {
		r.warmOpDone(o)
		return
	}
	if o != nil && r.replicated && r.copiesLeft.Add(-1) == 0 {
		missedCopies(r.ops) // before the call is done: its write is noted then
	}
	r.call.opDone(o)
}

// missedCopies marks down, at once, the copies that failed a replicated
// write another copy took (see backend.missedWrite), before the write is
// noted in the outages and answered; ops are the write's, one a copy.
func missedCopies(ops []*op) {
	took := false
	for _, o := range ops {
		took = took || o.err == nil && !memcache.IsErrorReply(o.reply)
	}
	if !took {
		return // the client is told the write failed: its outcome is unknown
	}
	for _, o := range ops {
		if o.err != nil {
			mcOf(o).to.missedWrite(o.err)
		}
	}
}

// ready marks a request the proxy answered itself, with no op, as done.
func (r *mcRequest) ready() {
	r.left.Store(1)
	r.opDone(nil)
}

// requestError makes r's reply the client error err is, if it is one.
func (r *mcRequest) requestError(err error) bool {
	var pe *memcache.Error
	if !errors.As(err, &pe) {
		return false
	}
	r.close = pe.Close
	r.answerError(pe)
	return true
}

// answerError makes r's reply the error line of err. memcached answers
// nothing, errors included, to a classic command with noreply (a meta
// command's q hides successes only): a reply the client does not expect
// would shift every later one. A request that closes the connection still
// says why.
func (r *mcRequest) answerError(err error) {
	var se *ServerError
	r.failed = errors.As(err, &se) || errors.Is(err, ErrNoServers)
	r.local = r.local[:0]
	if !r.req.Noreply || r.req.Cmd.IsMeta() || r.close {
		r.local = appendErrorReply(r.local, err)
	}
}

// addOp returns a reusable op of r for cmd, due by deadline, charged to
// the client and written with the client's batch.
func (r *mcRequest) addOp(cmd memcache.Command, deadline time.Time) *mcOp {
	o := mcOf(r.nextOp(r.newOp))
	o.cmd, o.deadline, o.charge, o.batch = cmd, deadline, r.charge, r.batch
	return o
}

// encode encodes req as the op's request, a large data block by reference.
func (o *mcOp) encode(req *memcache.Request) {
	o.keys = len(req.Keys)
	o.unsaid = req.Noreply && !req.Cmd.IsMeta()
	if req.Cmd.IsStorage() && len(req.Data) > byRef {
		o.buf = memcache.AppendHead(o.buf[:0], req)
		o.data = req.Data
		return
	}
	o.buf = memcache.AppendRequest(o.buf[:0], req)
}

// reset makes r ready for the next request, keeping its buffers but those
// a large request grew (see memcache.Request.Trim).
func (r *mcRequest) reset() {
	for _, o := range r.ops {
		m := mcOf(o)
		o.reply, m.spans, o.err, o.buf = trim(o.reply), m.spans[:0], nil, trim(o.buf)
		o.data, o.held, o.small = nil, 0, 0
		m.role, m.to, o.batch, o.unsaid = 0, nil, r.batch, false
	}
	if r.warm != nil {
		r.warm.reset()
	}
	r.req.Trim()
	r.call.reset()
	r.replicated, r.place = false, nil
}

// dispatch starts serving the request in pool p: it answers what the
// proxy answers itself and forwards the rest to the servers.
func (r *mcRequest) dispatch(p *pool) {
	r.pool, r.start = p, time.Now()
	switch {
	case r.answer(p):
		r.ready()
	case r.req.Cmd == memcache.CmdVersion:
		r.version(p)
	default:
		r.forward(p)
	}
}

// answer answers a request the proxy answers itself, and reports whether
// r was one.
func (r *mcRequest) answer(p *pool) bool {
	req := &r.req
	switch req.Cmd {
	case memcache.CmdQuit:
		r.close = true
	case memcache.CmdStats:
		if len(req.Args) == 0 || len(req.Args) == 1 && string(req.Args[0]) == "proxy" {
			r.local = p.appendStats(r.local)
		} else {
			r.answerError(fmt.Errorf("%w %s", ErrStatsArgs, bytes.Join(req.Args, []byte(" "))))
		}
	case memcache.CmdVerbosity:
		if !req.Noreply {
			r.local = append(r.local, "OK\r\n"...)
		}
	case memcache.CmdMetaNoop:
		// Written only after every earlier reply, since replies keep order.
		r.local = append(r.local, "MN\r\n"...)
	case memcache.CmdFlushAll:
		if p.cfg.FlushAll == "broadcast" {
			return false
		}
		r.answerError(ErrFlushAllRefused)
	default:
		return false
	}
	return true
}

// forward sends a request the proxy does not answer itself to the servers
// it concerns; in a migration window, by the warm path.
func (r *mcRequest) forward(p *pool) {
	if p.hot != nil {
		if v := r.hot.read(p, &r.req, r.start.UnixNano(), &r.route); v != nil {
			r.local = append(r.local[:0], v...)
			r.ready()
			return
		}
	}
	if p.outages.keeps && len(r.req.Keys) == 1 && writesKey(&r.req) {
		r.guardWrite(p, r.batch.flush, 1, r.req.Key)
	}
	if pl := p.place.Load(); pl.mig != nil && pl.mig.open() && r.forwardWarm(p, pl) {
		return
	}
	switch {
	case r.req.Cmd == memcache.CmdFlushAll:
		r.broadcast(p)
	case r.req.Cmd.IsRetrieval() && len(r.req.Keys) > 1:
		pl := p.place.Load()
		to := r.splitKeys(p, pl)
		if p.outages.count.Load() != 0 { // a server is out; after routing: see outages.fenceReads
			if err := p.outages.fenceReads(pl, len(r.req.Keys), r.req.Key, r.batch.flush); err != nil {
				r.failOps(err)
				return
			}
		}
		r.sendParts(to)
	default:
		r.single(p)
	}
}

// single sends a one-key request to the server that owns the key; with
// replicas, a write to every copy and a read to one.
func (r *mcRequest) single(p *pool) {
	write := p.cfg.Replicas > 1 && writesKey(&r.req)
	if write && comparesCas(&r.req) {
		r.answerError(ErrCasReplicas)
		r.ready()
		return
	}
	pl := p.place.Load()
	owners := pl.route(r.req.Key(0), write, &r.route)
	if len(owners) == 0 {
		r.answerError(ErrNoServers)
		r.ready()
		return
	}
	if !write && r.req.Cmd.IsRetrieval() && p.outages.count.Load() != 0 { // after routing: see outages.fenceReads
		if err := p.outages.fenceReads(pl, len(r.req.Keys), r.req.Key, r.batch.flush); err != nil {
			r.answerError(err)
			r.ready()
			return
		}
	}
	deadline := r.start.Add(p.cfg.Timeout)
	for range owners {
		r.addOp(r.req.Cmd, deadline).encode(&r.req)
	}
	r.replicated = write
	r.left.Store(int32(len(r.ops)))
	if write {
		r.copiesLeft.Store(int32(len(r.ops)))
		for i, o := range r.ops {
			mcOf(o).to = owners[i]
		}
	}
	for i, o := range r.ops {
		owners[i].send(o)
	}
}

// splitKeys makes the ops of a retrieval of several keys for the servers
// that own them by the placement pl, one op per server, each carrying
// that server's keys in the client's order (see memcache.Splitter); it
// returns the server of each op, nil for the keys no server is live for.
func (r *mcRequest) splitKeys(p *pool, pl *placement) []*backend {
	r.place = pl
	r.split.Split(&r.req, r.serverOf)
	parts := r.split.Parts()
	deadline := r.start.Add(p.cfg.Timeout)
	for i, part := range parts {
		o := r.addOp(r.req.Cmd, deadline)
		o.buf = r.split.AppendPart(o.buf[:0], i)
		o.keys = part.Keys
	}
	r.left.Store(int32(len(parts)))
	to := r.route.parts[:0]
	for _, part := range parts {
		var b *backend
		if part.Server < len(p.backends) {
			b = p.backends[part.Server]
		}
		to = append(to, b)
	}
	r.route.parts = to
	return to
}

// failOps ends every op of the request with err, unsent.
func (r *mcRequest) failOps(err error) {
	for _, o := range r.ops {
		o.finish(err)
	}
}

// sendParts sends each op of a split retrieval to its server; one with
// none fails.
func (r *mcRequest) sendParts(to []*backend) {
	for i, o := range r.ops {
		if to[i] == nil {
			o.finish(ErrNoServers)
			continue
		}
		to[i].send(o)
	}
}

// server returns the index of the server a read of key goes to by the
// request's placement, or the number of servers when no server is live.
// It is the Splitter's function from key to server.
func (r *mcRequest) server(key []byte) int {
	if owners := r.place.route(key, false, &r.route); len(owners) > 0 {
		return owners[0].index
	}
	return len(r.pool.backends)
}

// writesKey reports whether a keyed request changes the key's data, and so
// goes to every replica. mg, me and the retrievals (gat and gats touch
// only the copy they read) go to one.
func writesKey(req *memcache.Request) bool {
	switch req.Cmd {
	case memcache.CmdMetaSet, memcache.CmdMetaDelete, memcache.CmdMetaArithmetic:
		return true
	}
	return req.Cmd.IsStorage() || req.Cmd == memcache.CmdDelete || req.Cmd == memcache.CmdIncr ||
		req.Cmd == memcache.CmdDecr || req.Cmd == memcache.CmdTouch
}

// comparesCas reports whether a write is conditional on a cas value: cas,
// or a meta write with the C flag.
func comparesCas(req *memcache.Request) bool {
	if req.Cmd == memcache.CmdCas {
		return true
	}
	if req.Cmd.IsMeta() {
		for _, a := range req.Args {
			if len(a) > 0 && a[0] == 'C' {
				return true
			}
		}
	}
	return false
}

// mcOp is an op of the memcached front: the engine's op, and what its
// reply is read by and holds.
type mcOp struct {
	op
	cmd   memcache.Command
	spans []memcache.Span
	// keys is the number of keys the request asks for, for a retrieval.
	keys int
	// role is what the op is to a request in a migration window (see
	// mc_warm.go); 0 for every other.
	role opRole
	// to is the server a warm op, or a copy of a replicated write, went
	// to.
	to *backend
}

// newMcOp returns an op of the memcached front that calls done when done.
func newMcOp(done func(*op)) *mcOp {
	m := &mcOp{}
	m.op.front, m.op.done = m, done
	return m
}

// mcOf returns the memcached op that holds o.
func mcOf(o *op) *mcOp { return o.front.(*mcOp) }
