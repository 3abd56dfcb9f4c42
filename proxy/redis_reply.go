package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// The way out of a Redis request: each server's reply read into the op it
// answers (redisReplies), then the round's replies written in the order
// the requests were read, merged when a request went to several servers.

// answer writes the replies of a round's requests in order, as each is
// done, and recycles them; it reports false when the client is gone.
func (c *redisClient) answer(w *bufio.Writer, round []*redisRequest) bool {
	c.batch.flush()
	if idle := c.pool.Load().cfg.ClientIdleTimeout; idle > 0 {
		// A client that stops reading its replies is idle too.
		_ = c.conn.SetWriteDeadline(time.Now().Add(idle))
	}
	var err error
	for _, r := range round {
		<-r.done
		if err == nil {
			err = r.writeReply(w)
			if r.pool != nil && r.pool.traffic != nil {
				r.sampleTraffic()
			}
		}
		c.finish(r)
	}
	if err == nil {
		err = w.Flush()
	}
	return err == nil
}

// finish records the request and recycles it; it was counted out of its
// pool once its servers answered it (call.answered).
func (c *redisClient) finish(r *redisRequest) {
	if r.pool != nil && len(r.ops) > 1 {
		r.pool.stats.fragments.Add(uint64(len(r.ops)))
	}
	cmd := 0 // no command: a request that was not read whole has no pool either
	if r.req.Cmd != nil {
		cmd = r.req.Cmd.ID()
	}
	r.call.finish(c.charge, cmd)
	r.reset()
	c.free.Put(r)
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
			o.reply, redisOf(o).elems = appendRedisError(o.reply[:0], o.err), redisOf(o).elems[:0]
		}
		replies = append(replies, redis.Reply{Data: o.reply, Elems: redisOf(o).elems})
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
// after SERVER_ERROR (appendReplyCause), as nutcracker answers.
func appendRedisError(dst []byte, err error) []byte {
	return redis.AppendError(dst, string(appendReplyCause([]byte("ERR "), err)))
}

func (redisFront) replies(r io.Reader, b *backend) replies {
	// RESP3 only comes on the connections that asked for it (see
	// redisDialects); a RESP2 server never sends its types.
	return &redisReplies{rr: redis.NewReplyReader(r, redis.ReplyLimits{MaxBulk: b.pool.cfg.MaxValueSize, RESP3: true}), pool: b.pool}
}

// redisReplies reads a Redis server's replies.
type redisReplies struct {
	rr   *redis.ReplyReader
	pool *pool
}

func (r *redisReplies) Wait() error     { return r.rr.Wait() }
func (r *redisReplies) Buffered() int   { return r.rr.Buffered() }
func (r *redisReplies) badReply() error { return redis.ErrBadReply }

// errLoadingReply is the error of a -LOADING reply: one value, so that a
// loading server's replies allocate nothing.
var errLoadingReply = fmt.Errorf("%w (it answers -LOADING)", ErrServerLoading)

// inStep: a reply over the limits or with no room in the buffers, read
// and dropped, or a server's answer that it is still loading its data.
func (r *redisReplies) inStep(err error) bool {
	return errors.Is(err, redis.ErrReplyTooLarge) || errors.Is(err, redis.ErrNoRoom) ||
		errors.Is(err, redis.ErrReplyTooDeep) || errors.Is(err, ErrServerLoading)
}

func (r *redisReplies) read(o *op) (err error) {
	ro := redisOf(o)
	r.rr.Budget = o
	for range ro.skip {
		if o.reply, ro.elems, err = r.rr.Read(o.reply[:0], ro.elems[:0]); err != nil {
			return err
		}
	}
	o.reply, ro.elems, err = r.rr.Read(o.reply[:0], ro.elems[:0])
	if err == nil && loading(o.reply) {
		return errLoadingReply
	}
	if err == nil && bytes.HasPrefix(o.reply, readOnlyReply) {
		// A replica now: a failover demoted the server, and the source
		// may know its successor.
		r.pool.askSource()
	}
	return err
}

// readOnlyReply begins a replica's answer to a write ("-READONLY You
// can't write against a read only replica.").
var readOnlyReply = []byte("-READONLY ")

// loading reports whether a reply is redis-server's answer while it loads
// its data set at start ("-LOADING Redis is loading the dataset in
// memory").
func loading(reply []byte) bool {
	return len(reply) > 8 && reply[0] == '-' && string(reply[1:8]) == "LOADING"
}
