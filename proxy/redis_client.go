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
// max_pending), sends each on to its servers, then writes their replies
// in request order, in one write.
//
// The memcached client's reader and writer goroutines let replies flow
// while requests still come in; here a round's replies wait for its last
// request to be read whole. That costs a client nothing that waits for its
// replies (redis-benchmark, pipelines), and saves the hand-over of every
// request to a writer: a goroutine parked and woken, two channel
// operations.
type redisClient struct {
	srv  *Server
	ln   *listener
	conn net.Conn
	free sync.Pool // *redisRequest, reused once written
	// authed is set once the client gave the pool's password, or from
	// the start when there is none.
	authed bool

	// The reader's routing state: the placement a request is split by,
	// and serverOf bound once, so that splitting allocates nothing.
	place    *placement
	none     int // the server index of a key no server is live for
	route    routeScratch
	serverOf func(key []byte) int
}

func (s *Server) serveRedis(ln *listener, conn net.Conn) {
	c := &redisClient{srv: s, ln: ln, conn: conn, authed: ln.pool.Load().cfg.clientPassword() == ""}
	c.free.New = func() any { return newRedisRequest() }
	c.serverOf = c.server
	c.serve()
	conn.Close()
}

// limits are the request limits of the client: the pool's largest value,
// within the server's own limit, and before the client authenticates
// what redis-server allows then.
func (c *redisClient) limits(p *pool) redis.Limits {
	return redis.Limits{MaxBulk: min(p.cfg.MaxValueSize, redis.DefaultMaxBulk), Unauthenticated: !c.authed}
}

// serve serves rounds of requests until the client closes, sends bytes
// that end the stream, asks to quit, the server shuts down, or a reply
// cannot be written.
func (c *redisClient) serve() {
	rw := c.rw()
	r := redis.NewReader(rw, c.limits(c.ln.pool.Load()))
	w := bufio.NewWriterSize(rw, 16<<10)
	var round []*redisRequest
	for {
		rq, end := c.read(r)
		if rq != nil {
			round = append(round, rq)
		}
		if !end && r.Buffered() > 0 && len(round) < c.ln.pool.Load().cfg.MaxPending {
			continue
		}
		if !c.answer(w, round) {
			return
		}
		clear(round)
		round = round[:0]
		if end {
			return
		}
	}
}

// read reads and dispatches the next request; end reports that the
// connection is to be closed after it, or at once when rq is nil.
func (c *redisClient) read(r *redis.Reader) (rq *redisRequest, end bool) {
	if idle := c.ln.pool.Load().cfg.ClientIdleTimeout; idle > 0 {
		// Renewed before every read, so that a client that keeps sending
		// is never cut, and one that stalls mid-request is.
		_ = c.conn.SetReadDeadline(time.Now().Add(idle))
	}
	rq = c.free.Get().(*redisRequest)
	err := r.Read(&rq.req)
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
		c.free.Put(rq)
		if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
			c.srv.log.Debug("client read", "remote", c.conn.RemoteAddr(), "err", err)
		}
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

// finish counts the request out of its pool and recycles it.
func (c *redisClient) finish(r *redisRequest) {
	if r.pool != nil {
		r.pool.release()
	}
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
