package proxy

import (
	"bufio"
	"errors"
	"sync/atomic"
	"time"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// redisRequest is one Redis client request on its way: the request, how
// it splits over servers, the ops sent for it, and the signal that all of
// them are done. The client's writer takes requests in the order they were
// read, so replies keep that order. A request is reused once its reply is
// written.
type redisRequest struct {
	req   redis.Request
	split redis.Splitter
	pool  *pool
	ops   []*op
	left  atomic.Int32
	done  chan struct{} // receives once when every op is done
	local []byte        // a reply made by the proxy itself
	close bool          // close the connection after this reply
	start time.Time
	// failed is set when a server's failure made (part of) the reply
	// the proxy's error (nutcracker's forward_error).
	failed bool
	// held is what reading the request reserved in the client's charge
	// (its ops hold what their replies did).
	held int64

	// Scratch space, so that merging allocates nothing.
	replies []redis.Reply
	merged  []byte
}

func newRedisRequest() *redisRequest { return &redisRequest{done: make(chan struct{}, 1)} }

func (r *redisRequest) opDone(*op) {
	if r.left.Add(-1) == 0 {
		r.done <- struct{}{}
	}
}

// ready marks a request the proxy answered itself, with no op, as done.
func (r *redisRequest) ready() {
	r.left.Store(1)
	r.opDone(nil)
}

// answerError makes r's reply the error reply of err.
func (r *redisRequest) answerError(err error) {
	r.local = appendRedisError(r.local[:0], err)
}

// newOp returns a reusable op of r.
func (r *redisRequest) newOp(deadline time.Time) *op {
	n := len(r.ops)
	if n < cap(r.ops) && r.ops[:n+1][n] != nil {
		r.ops = r.ops[:n+1]
	} else {
		r.ops = append(r.ops, &op{done: r.opDone})
	}
	o := r.ops[n]
	o.deadline = deadline
	return o
}

// heldBytes returns what the request and its replies hold in the
// client's charge.
func (r *redisRequest) heldBytes() int64 {
	n := r.held
	for _, o := range r.ops {
		n += o.held
	}
	return n
}

// reset makes r ready for the next request, keeping its buffers.
func (r *redisRequest) reset() {
	for _, o := range r.ops {
		o.reply, o.elems, o.err, o.buf = o.reply[:0], o.elems[:0], nil, o.buf[:0]
		o.held, o.small = 0, 0
	}
	r.held = 0
	r.ops, r.local, r.pool, r.close, r.failed = r.ops[:0], r.local[:0], nil, false, false
}

// writeReply writes the reply of a finished request: the proxy's own, a
// server's as it is, or the servers' replies to a split request merged.
// A server that failed answers with the proxy's error reply, which in a
// split request becomes the client's reply, as nutcracker makes it.
func (r *redisRequest) writeReply(w *bufio.Writer) error {
	switch len(r.ops) {
	case 0:
		_, err := w.Write(r.local)
		return err
	case 1:
		o := r.ops[0]
		if o.err != nil {
			r.failed = true
			r.answerError(o.err)
			_, err := w.Write(r.local)
			return err
		}
		_, err := w.Write(o.reply)
		return err
	}
	replies := r.replies[:0]
	for _, o := range r.ops {
		if o.err != nil {
			r.failed = true
			o.reply, o.elems = appendRedisError(o.reply[:0], o.err), o.elems[:0]
		}
		replies = append(replies, redis.Reply{Data: o.reply, Elems: o.elems})
	}
	r.replies = replies
	merged, err := r.split.Merge(r.merged[:0], replies)
	if err != nil {
		merged = appendRedisError(r.merged[:0], err)
	}
	r.merged = merged
	_, err = w.Write(merged)
	return err
}

// appendRedisError appends the error reply a Redis client reads for a
// request that failed with err: "-ERR " and what a memcached client reads
// after SERVER_ERROR, the server's address once and the cause.
func appendRedisError(dst []byte, err error) []byte {
	var se *ServerError
	if errors.As(err, &se) {
		return redis.AppendError(dst, string(se.appendText([]byte("ERR "))))
	}
	return redis.AppendError(dst, "ERR "+withoutPrefix(err))
}

// errorReply returns the reply of err in the pool's protocol.
func (p *pool) errorReply(err error) []byte {
	if p.cfg.Redis {
		return appendRedisError(nil, err)
	}
	return appendErrorReply(nil, err)
}
