package proxy

import (
	"bufio"
	"errors"
	"io"
	"net"
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
	cl   *client // its part in drains
	srv  *Server
	ln   *listener
	conn net.Conn
	free sync.Pool // *redisRequest, reused once written
	// authed is set once the client gave the pool's password, or from
	// the start when there is none.
	authed bool
	// err is the read error that ended the client's requests, nil when
	// it quit, was drained or its connection had to be closed.
	err error
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

	// The reader's routing state: the placement a request is split by,
	// and serverOf bound once, so that splitting allocates nothing.
	place    *placement
	none     int // the server index of a key no server is live for
	route    routeScratch
	serverOf func(key []byte) int
}

// serveRedis serves a client of a Redis pool until it closes, quits or is
// drained.
func (cl *client) serveRedis() {
	c := &redisClient{cl: cl, srv: cl.srv, ln: cl.ln, conn: cl.conn, authed: cl.ln.pool.Load().cfg.clientPassword() == ""}
	c.free.New = func() any { return newRedisRequest() }
	c.serverOf = c.server
	p := c.ln.pool.Load()
	c.charge = newCharge(c.srv.budget, p.cfg)
	rw := c.rw()
	// A request read in part waits for the rest: what the round has
	// queued is written first.
	in := &byteCount{rw: rw, total: &p.stats.bytesIn, before: c.batch.flush}
	out := &byteCount{rw: rw, total: &p.stats.bytesOut}
	written := c.serve(in, out)
	c.conn.Close()
	in.flush()
	out.flush()
	switch rerr := c.err; {
	case !written || rerr != nil && !errors.Is(rerr, io.EOF) && !errors.Is(rerr, net.ErrClosed):
		p.stats.clientErr.Add(1)
	case rerr == nil || errors.Is(rerr, io.EOF):
		p.stats.clientEOF.Add(1) // the client ended the connection, or quit
	}
}

// limits are the request limits of the client: the pool's largest value,
// within the server's own limit, and before the client authenticates
// what redis-server allows then.
func (c *redisClient) limits(p *pool) redis.Limits {
	return redis.Limits{MaxBulk: min(p.cfg.MaxValueSize, redis.DefaultMaxBulk), Unauthenticated: !c.authed,
		Budget: redisBudget{c: c.charge, endRound: c.endRound}}
}

// serve serves rounds of requests, read from in and answered on out,
// until the client closes, sends bytes that end the stream, asks to quit,
// is drained or the server shuts down; it reports false when a reply
// could not be written. A round ends when the client has sent nothing
// more yet, at max_pending requests or client_buffer_limit, or when a
// request waits for room in kolco.buffer_limit (see redisBudget).
func (c *redisClient) serve(in io.Reader, out io.Writer) bool {
	c.w = bufio.NewWriterSize(out, 16<<10)
	r := redis.NewReader(in, c.limits(c.ln.pool.Load()))
	for {
		var rq *redisRequest
		end := !c.cl.next(r)
		if !end {
			rq, end = c.read(r)
		}
		if rq != nil {
			c.round = append(c.round, rq)
		}
		if !end && !c.gone && r.Buffered() > 0 && len(c.round) < c.ln.pool.Load().cfg.MaxPending && c.charge.held.Load() < c.charge.limit {
			continue
		}
		if !c.endRound() {
			return false
		}
		if end {
			return true
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
	rq.held = c.charge.take()
	pool := c.ln.pool.Load()
	switch {
	case err == nil:
		if pool = c.ln.acquire(pool); pool == nil || !pool.cfg.Redis {
			if pool != nil {
				pool.release()
			}
			rq.close = true
			rq.answerError(ErrPoolRemoved)
			rq.ready()
			break
		}
		c.dispatch(pool, rq, r)
	case isRequestError(err, &rq.local, &rq.close):
		pool.stats.clientError()
		rq.ready()
	default:
		c.charge.release(rq.held)
		rq.held = 0
		c.free.Put(rq)
		if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
			c.srv.log.Debug("client read", "remote", c.conn.RemoteAddr(), "err", err)
		}
		c.err = err
		return nil, true
	}
	return rq, rq.close
}

// isRequestError reports whether err is an error in the request, and if
// so appends the reply to it to *reply and sets *close when the stream
// cannot go on.
func isRequestError(err error, reply *[]byte, close *bool) bool {
	re, ok := err.(*redis.Error)
	if ok {
		*reply = append((*reply)[:0], re.Reply...)
		*close = re.Close
	}
	return ok
}

// answer writes the replies of a round's requests in order, as each is
// done, and recycles them; it reports false when the client is gone.
func (c *redisClient) answer(w *bufio.Writer, round []*redisRequest) bool {
	c.batch.flush()
	if idle := c.ln.pool.Load().cfg.ClientIdleTimeout; idle > 0 {
		// A client that stops reading its replies is idle too.
		_ = c.conn.SetWriteDeadline(time.Now().Add(idle))
	}
	var err error
	for _, r := range round {
		<-r.done
		if err == nil {
			err = r.writeReply(w)
		}
		c.finish(r)
	}
	if err == nil {
		err = w.Flush()
	}
	return err == nil
}

// rw returns what reads and writes the client's connection.
func (c *redisClient) rw() io.ReadWriter {
	if r := newRawIO(c.conn); r != nil {
		return r
	}
	return c.conn
}

// finish records the request, counts it out of its pool and recycles it.
func (c *redisClient) finish(r *redisRequest) {
	if p := r.pool; p != nil {
		p.stats.redis.request(r.req.Cmd, time.Since(r.start))
		if r.failed {
			p.stats.forwardErrors.Add(1)
		}
		if len(r.ops) > 1 {
			p.stats.fragments.Add(uint64(len(r.ops)))
		}
		p.release()
	}
	c.charge.release(r.heldBytes())
	r.reset()
	c.free.Put(r)
}

// acquire counts a request into the listener's current pool, following
// reloads; nil means the pool was removed.
func (l *listener) acquire(p *pool) *pool {
	for !p.acquire() {
		next := l.pool.Load()
		if next == p {
			return nil
		}
		p = next
	}
	return p
}
