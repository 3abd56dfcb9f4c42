package proxy

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// Requests in a migration window (see migration). A request for a key the
// change moved goes to the key's new server, as always, and then:
//
//   - a read (get, gets, gat, gats, mg) that misses is looked up at the
//     key's previous servers, newest placement first, skipping any marked
//     down or tainted; a value found is answered and copied to the new
//     server in add mode ("ms ... ME") with its remaining TTL and flags,
//     so that a write that reached the new server first wins. gets and
//     gats answer the CAS value of the copy, the new server's; mg is asked
//     again of the new server once the copy is there, for its flags;
//   - a write that replaces the value (set, ms) or a delete (delete, md)
//     also deletes the key at its previous servers, so that no older value
//     can be read later; a delete answers DELETED when a previous server
//     held the key;
//   - a command that reads or changes the value held (add, replace,
//     append, prepend, cas, incr, decr, touch, ma, ms with C, I or a mode,
//     md with C or I) first moves the value as a read would, then goes to
//     the new server and deletes at the previous ones.
//
// A copy must never bring back a key deleted meanwhile. Writes and deletes
// of a key in a window count themselves in the key's stripe after sending,
// under its lock; a copy checks the count under the lock and holds it
// until the new server has stored the copy. So a write is either counted
// before the copy's check (the copy is dropped) or sent after the copy is
// stored (and wins). The reads and deletes at a previous server go on one
// connection chosen by the key, so that a delete sent before a read is
// done before it. This orders one proxy's requests; proxies that share
// servers do not see each other's deletes (see docs/changes.md). A client's
// own requests keep their order through a window: see warmGate.

// opRole is what an op is to a request in a migration window.
type opRole uint8

const (
	roleRead  opRole = iota + 1 // the one op of a read: its miss falls back
	roleSplit                   // an op of a multi-key read
	roleClean                   // a delete at a previous server
	roleWait                    // an op the request's fallback waits for
)

// warmClass is how a command is served in a migration window.
type warmClass uint8

const (
	warmNone   warmClass = iota // as outside a window
	warmRead                    // read; on a miss, fall back
	warmSet                     // replaces the value: delete at the previous servers
	warmDelete                  // deletes: delete at the previous servers
	warmPull                    // reads or changes the value held: move it first
)

// classify returns how req is served in a migration window.
func classify(req *memcache.Request) warmClass {
	switch req.Cmd {
	case memcache.CmdGet, memcache.CmdGets, memcache.CmdGat, memcache.CmdGats, memcache.CmdMetaGet:
		return warmRead
	case memcache.CmdSet:
		return warmSet
	case memcache.CmdDelete:
		return warmDelete
	case memcache.CmdMetaSet:
		if metaFlag(req, 'C') != nil || metaFlag(req, 'I') != nil {
			return warmPull
		}
		if m := metaFlag(req, 'M'); m != nil && (len(m) < 2 || m[1] != 'S' && m[1] != 's') {
			return warmPull
		}
		return warmSet
	case memcache.CmdMetaDelete:
		if metaFlag(req, 'C') != nil || metaFlag(req, 'I') != nil {
			return warmPull
		}
		return warmDelete
	case memcache.CmdAdd, memcache.CmdReplace, memcache.CmdAppend, memcache.CmdPrepend, memcache.CmdCas,
		memcache.CmdIncr, memcache.CmdDecr, memcache.CmdTouch, memcache.CmdMetaArithmetic:
		return warmPull
	}
	return warmNone
}

// metaFlag returns the meta flag of req that starts with c, or nil.
func metaFlag(req *memcache.Request, c byte) []byte {
	for _, a := range req.Args {
		if len(a) > 0 && a[0] == c {
			return a
		}
	}
	return nil
}

// warmState is a request's state in a migration window.
type warmState struct {
	active bool
	pool   *pool
	m      *migration
	class  warmClass
	hash   uint64
	// srcs are a one-key request's previous servers, newest first.
	srcs []*backend
	// owners are the servers of a split read's ops, by op.
	owners []*backend
	// fills are the values found by falling back, by key index, as
	// VALUE entries in fillBuf; end 0 means none.
	fills   []fillSpan
	fillBuf []byte
	// n is a one-key request's server.
	n *backend
	// deleted is set when a delete found the key at a previous server.
	deleted atomic.Bool
	// gated is set while the request is counted in its client's gate.
	gated bool
	// The fallback's own ops, and the wait for them; one holds a
	// request's op the fallback sends again (see fallbackOne).
	ops     []*mcOp
	one     [1]*mcOp
	pending atomic.Int32
	wake    chan struct{}
	doneFn  func(*op)
	keys    []warmKey
	locks   []int
	cursor  []int
	scratch routeScratch
	keybuf  []byte
}

type fillSpan struct{ start, end int }

// open returns w made ready for a request in the window of m of pool p;
// a nil w, a request's first window, is made now and kept by the request
// for its next.
func (w *warmState) open(p *pool, m *migration) *warmState {
	if w == nil {
		w = &warmState{wake: make(chan struct{}, 1)}
		w.doneFn = w.opDone
	}
	w.active, w.pool, w.m = true, p, m
	return w
}

func (w *warmState) reset() {
	for _, o := range w.ops {
		o.reply, o.spans, o.err, o.buf, o.to = o.reply[:0], o.spans[:0], nil, o.buf[:0], nil
	}
	w.active, w.pool, w.m, w.n, w.gated = false, nil, nil, nil, false
	w.deleted.Store(false)
	w.ops, w.srcs, w.owners, w.fills, w.fillBuf = w.ops[:0], w.srcs[:0], w.owners[:0], w.fills[:0], w.fillBuf[:0]
	w.keys, w.keybuf, w.one[0] = w.keys[:0], w.keybuf[:0], nil
}

// newOp returns a reusable op of the fallback.
func (w *warmState) newOp(cmd memcache.Command, to *backend) *mcOp {
	n := len(w.ops)
	if n < cap(w.ops) && w.ops[:n+1][n] != nil {
		w.ops = w.ops[:n+1]
	} else {
		w.ops = append(w.ops, newMcOp(w.doneFn))
	}
	o := w.ops[n]
	o.cmd, o.to, o.deadline = cmd, to, time.Now().Add(w.pool.cfg.Timeout)
	return o
}

func (w *warmState) opDone(*op) {
	if w.pending.Add(-1) == 0 {
		w.wake <- struct{}{}
	}
}

// run sends ops, each to its server (keyed by the hash h of its key when
// keyed is set), and waits until all are done.
func (w *warmState) run(ops []*mcOp, keyed bool, h func(i int) uint64) {
	if len(ops) == 0 {
		return
	}
	w.pending.Store(int32(len(ops)))
	for i, o := range ops {
		if keyed {
			o.to.sendKeyed(&o.op, h(i))
		} else {
			o.to.send(&o.op)
		}
	}
	<-w.wake
}

// forwardWarm sends a request in the migration window of pl as mc_warm.go
// says, and reports false for one served as outside a window: a command
// of no key, a flush, a key the change did not move.
func (r *mcRequest) forwardWarm(p *pool, pl *placement) bool {
	req := &r.req
	class := classify(req)
	if class == warmNone || pl.replicas > 1 || len(req.Keys) == 0 {
		return false
	}
	if class != warmRead {
		// After the client's earlier reads, whatever their fallbacks do.
		r.gate.wait(r.batch)
	}
	if class == warmRead && len(req.Keys) > 1 {
		return r.splitWarm(p, pl)
	}
	owners := pl.route(req.Key(0), false, &r.route)
	if len(owners) == 0 || owners[0].health.isDown() {
		return false
	}
	n := owners[0]
	r.warm = r.warm.open(p, pl.mig)
	w := r.warm
	w.srcs = pl.mig.sources(w.srcs[:0], req.Key(0), n, &w.scratch)
	if class == warmRead {
		w.srcs = slices.DeleteFunc(w.srcs, func(b *backend) bool { return !pl.mig.readable(b) })
	}
	if len(w.srcs) == 0 {
		w.active = false
		return false
	}
	w.class, w.hash, w.n = class, keyHash(req.Key(0)), n
	switch class {
	case warmRead:
		o := r.addOp(req.Cmd, r.start.Add(p.cfg.Timeout))
		o.encode(req)
		o.role = roleRead
		r.left.Store(1)
		w.enterGate(r)
		// Fenced as outside a window (outages.fenceReads): the server
		// read is a stand-in all the same, and the fallback reads the
		// previous servers only on a miss there (the fault schedule's
		// seed 113 read a copy a change left, unfenced).
		if err := p.outages.fenceReads(pl, len(r.req.Keys), r.req.Key, r.batch.flush); err != nil {
			o.op.finish(err)
			break
		}
		n.send(&o.op)
	case warmPull:
		// On the client's reader, after its earlier requests: its later
		// ones go out after this one's write.
		if r.batch != nil {
			r.batch.flush()
		}
		w.keys = append(w.keys[:0], w.oneKey(r))
		w.fallback(r)
		r.writeWarmed(p, n, r.batch)
	default:
		r.writeWarmed(p, n, r.batch)
	}
	return true
}

// writeWarmed sends a write or delete to n, the key's server, and a
// delete to each of the key's previous servers, then counts the write in
// the key's stripe (see the ordering above). batch is the client reader's
// (see flushBatch), or nil when another goroutine sends.
func (r *mcRequest) writeWarmed(p *pool, n *backend, batch *flushBatch) {
	w := r.warm
	req := &r.req
	deadline := time.Now().Add(p.cfg.Timeout)
	o := r.addOp(req.Cmd, deadline)
	o.encode(req)
	o.batch = batch
	for _, s := range w.srcs {
		c := r.addOp(memcache.CmdMetaDelete, deadline)
		c.buf = memcache.AppendMetaDelete(c.buf[:0], req.Keys[0], req.Base64, 0)
		c.role, c.to, c.batch = roleClean, s, batch
	}
	p.mig.stats.add(p.mig.stats.m.cleans, &p.mig.stats.cleans, len(w.srcs))
	r.left.Store(int32(len(r.ops)))
	st := p.mig.stripes.of(w.hash)
	st.mu.Lock()
	n.send(r.ops[0])
	for _, c := range r.ops[1:] {
		mcOf(c).to.sendKeyed(c, w.hash)
	}
	st.writes.Add(1)
	st.mu.Unlock()
}

// warmOpDone ends an op of a request in a migration window.
func (r *mcRequest) warmOpDone(o *op) {
	w := r.warm
	mo := mcOf(o)
	switch mo.role {
	case roleWait:
		w.opDone(o)
		return
	case roleClean:
		switch {
		case o.err != nil || memcache.IsErrorReply(o.reply):
			w.m.taint(mo.to)
			w.pool.mig.stats.add(w.pool.mig.stats.m.cleanFails, &w.pool.mig.stats.cleanFails, 1)
		case w.class == warmDelete && string(o.reply) == "HD\r\n":
			w.deleted.Store(true)
		}
	}
	if r.left.Add(-1) != 0 {
		return
	}
	switch {
	case mo.role == roleRead && o.err == nil && isMiss(mo):
		go w.fallbackOne(r)
	case mo.role == roleSplit:
		w.afterSplit(r)
	default:
		r.warmEnd()
	}
}

// isMiss reports whether o's reply is a miss of its one key.
func isMiss(o *mcOp) bool {
	if o.cmd == memcache.CmdMetaGet {
		// "EN", with the tokens of the k and O flags when asked for
		// (memcached 1.6.18).
		return len(o.reply) >= 4 && string(o.reply[:2]) == "EN" && (o.reply[2] == '\r' || o.reply[2] == ' ')
	}
	return string(o.reply) == "END\r\n"
}

// enterGate counts a read that may fall back in its client's gate.
func (w *warmState) enterGate(r *mcRequest) {
	if r.gate != nil {
		r.gate.enter()
		w.gated = true
	}
}
