package proxy

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
	"github.com/kolco-dev/kolco/proxy/redis"
)

// request is one client request on its way: the request, the ops sent for
// it, and the signal that all of them are done. The client's writer takes
// requests in the order they were read, so replies keep that order
// whatever order the servers answer in. A request is reused once its reply
// is written.
type request struct {
	req   memcache.Request
	pool  *pool
	ops   []*op
	left  atomic.Int32
	done  chan struct{} // receives once when every op is done
	local []byte        // a reply made by the proxy itself
	close bool          // close the connection after this reply
	start time.Time

	// charge is the client's; held is what reading the request reserved
	// in it (its ops hold what their replies did).
	charge *charge
	held   int64
	// batch is the client's reader's, for the writes of its requests.
	batch *flushBatch
	// gate is the client's: it orders its requests in a migration window
	// (see warmGate).
	gate *warmGate

	// failed is set when the reply is the proxy's error for a server's
	// failure (nutcracker's forward_error).
	failed bool
	// replicated marks a write sent to every replica of its key: the
	// reply is the first one that is not an error, in preference order.
	replicated bool
	// order is, for a split retrieval, the index into ops of each key.
	order []int
	// Scratch space, so that routing and splitting allocate nothing.
	route  routeScratch
	keys   [][]byte // a split retrieval's keys, grouped by op
	starts []int    // where each op's keys end in keys

	// warm is the request's state in a migration window (see mc_warm.go);
	// made the first time the request needs it, then kept.
	warm *warmState
}

func newRequest(c *charge, b *flushBatch, g *warmGate) *request {
	return &request{done: make(chan struct{}, 1), charge: c, batch: b, gate: g}
}

// op is one request to one server and, once done, its reply.
type op struct {
	buf []byte // the encoded request, or its head when data is set
	// data is a large data block passed by reference: it is written
	// between buf and "\r\n".
	data     []byte
	cmd      memcache.Command
	deadline time.Time
	reply    []byte
	spans    []memcache.Span
	elems    []redis.Span // a Redis array reply's elements
	err      error
	done     func(*op) // called once, from a server's goroutine
	// role is what the op is to a request in a migration window (see
	// mc_warm.go); 0 for every other.
	role opRole
	// to is the server a warm op went to.
	to *backend
	// batch, when set, is the client's reader's (see flushBatch).
	batch *flushBatch

	// charge is the client's; held is what the reply's values reserved
	// in it, small the bytes of small values not yet charged.
	charge *charge
	held   int64
	small  int
	// keys is the number of keys the request asks for, for a retrieval.
	keys int
}

// encode encodes req as the op's request, a large data block by reference.
func (o *op) encode(req *memcache.Request) {
	o.keys = len(req.Keys)
	if req.Cmd.IsStorage() && len(req.Data) > byRef {
		o.buf = memcache.AppendHead(o.buf[:0], req)
		o.data = req.Data
		return
	}
	o.buf = memcache.AppendRequest(o.buf[:0], req)
}

// size returns the bytes of the encoded request.
func (o *op) size() int {
	if o.data != nil {
		return len(o.buf) + len(o.data) + 4
	}
	return len(o.buf)
}

func (o *op) finish(err error) {
	o.err = err
	o.done(o)
}

func (r *request) opDone(o *op) {
	if o != nil && o.role != 0 {
		r.warmOpDone(o)
		return
	}
	if r.left.Add(-1) == 0 {
		r.done <- struct{}{}
	}
}

// ready marks a request the proxy answered itself, with no op, as done.
func (r *request) ready() {
	r.left.Store(1)
	r.opDone(nil)
}

// answerError makes r's reply the error line of err. memcached answers
// nothing, errors included, to a classic command with noreply (a meta
// command's q hides successes only): a reply the client does not expect
// would shift every later one. A request that closes the connection still
// says why.
func (r *request) answerError(err error) {
	var se *ServerError
	r.failed = errors.As(err, &se) || errors.Is(err, ErrNoServers)
	r.local = r.local[:0]
	if !r.req.Noreply || r.req.Cmd.IsMeta() || r.close {
		r.local = appendErrorReply(r.local, err)
	}
}

// newOp returns a reusable op of r.
func (r *request) newOp(cmd memcache.Command, deadline time.Time) *op {
	n := len(r.ops)
	if n < cap(r.ops) && r.ops[:n+1][n] != nil {
		r.ops = r.ops[:n+1]
	} else {
		r.ops = append(r.ops, &op{done: r.opDone, charge: r.charge, batch: r.batch})
	}
	o := r.ops[n]
	o.cmd, o.deadline = cmd, deadline
	return o
}

// heldBytes returns what r and its ops hold in the client's charge.
func (r *request) heldBytes() int64 {
	n := r.held
	for _, o := range r.ops {
		n += o.held
	}
	return n
}

// reset makes r ready for the next request, keeping its buffers but those
// a large request grew (see memcache.Request.Trim).
func (r *request) reset() {
	for _, o := range r.ops {
		o.reply, o.spans, o.err, o.buf = trim(o.reply), o.spans[:0], nil, trim(o.buf)
		o.data, o.held, o.small = nil, 0, 0
		o.role, o.to, o.batch = 0, nil, r.batch
	}
	if r.warm != nil {
		r.warm.reset()
	}
	r.req.Trim()
	r.ops, r.order, r.local, r.pool, r.close = r.ops[:0], r.order[:0], trim(r.local), nil, false
	r.replicated, r.held, r.failed = false, 0, false
}

// trim returns b emptied, or nil when it grew past what is worth keeping.
func trim(b []byte) []byte {
	if cap(b) > byRef {
		return nil
	}
	return b[:0]
}
