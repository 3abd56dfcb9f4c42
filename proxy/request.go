package proxy

import (
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

	// replicated marks a write sent to every replica of its key: the
	// reply is the first one that is not an error, in preference order.
	replicated bool
	// order is, for a split retrieval, the index into ops of each key.
	order []int
	// Scratch space, so that routing and splitting allocate nothing.
	route  routeScratch
	keys   [][]byte // a split retrieval's keys, grouped by op
	starts []int    // where each op's keys end in keys
}

func newRequest() *request { return &request{done: make(chan struct{}, 1)} }

// op is one request to one server and, once done, its reply.
type op struct {
	buf      []byte // the encoded request
	cmd      memcache.Command
	deadline time.Time
	reply    []byte
	spans    []memcache.Span
	elems    []redis.Span // a Redis array reply's elements
	err      error
	done     func(*op) // called once, from a server's goroutine
}

func (o *op) finish(err error) {
	o.err = err
	o.done(o)
}

func (r *request) opDone(*op) {
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
		r.ops = append(r.ops, &op{done: r.opDone})
	}
	o := r.ops[n]
	o.cmd, o.deadline = cmd, deadline
	return o
}

// reset makes r ready for the next request, keeping its buffers.
func (r *request) reset() {
	for _, o := range r.ops {
		o.reply, o.spans, o.err, o.buf = o.reply[:0], o.spans[:0], nil, o.buf[:0]
	}
	r.ops, r.order, r.local, r.pool, r.close = r.ops[:0], r.order[:0], r.local[:0], nil, false
	r.replicated = false
}
