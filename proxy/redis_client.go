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

// redisClient serves one client connection of a Redis pool: its reader
// parses requests and sends them on, its writer writes the replies in
// request order, as the memcached client does.
type redisClient struct {
	srv  *Server
	ln   *listener
	conn net.Conn
	q    chan *redisRequest
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
	p := ln.pool.Load()
	c := &redisClient{srv: s, ln: ln, conn: conn, q: make(chan *redisRequest, p.cfg.MaxPending),
		authed: p.cfg.clientPassword() == ""}
	c.free.New = func() any { return newRedisRequest() }
	c.serverOf = c.server
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.writeLoop()
	}()
	c.readLoop()
	close(c.q)
	wg.Wait()
	conn.Close()
}

// limits are the request limits of the client: the pool's largest value,
// within the server's own limit, and before the client authenticates
// what redis-server allows then.
func (c *redisClient) limits(p *pool) redis.Limits {
	return redis.Limits{MaxBulk: min(p.cfg.MaxValueSize, redis.DefaultMaxBulk), Unauthenticated: !c.authed}
}

// readLoop reads requests until the client closes, sends bytes that end
// the stream, asks to quit, or the server shuts down; every request read
// is queued.
func (c *redisClient) readLoop() {
	r := redis.NewReader(c.rw(), c.limits(c.ln.pool.Load()))
	// Declared once: errors.As makes it escape, which inside the loop
	// cost an allocation per request.
	var re *redis.Error
	for {
		if idle := c.ln.pool.Load().cfg.ClientIdleTimeout; idle > 0 {
			_ = c.conn.SetReadDeadline(time.Now().Add(idle))
		}
		rq := c.free.Get().(*redisRequest)
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
		case errors.As(err, &re):
			pool.stats.clientError()
			rq.local = append(rq.local[:0], re.Reply...)
			rq.close = re.Close
			rq.ready()
		default:
			c.free.Put(rq)
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				c.srv.log.Debug("client read", "remote", c.conn.RemoteAddr(), "err", err)
			}
			return
		}
		closing := rq.close // rq belongs to the writer once queued
		c.q <- rq
		if closing {
			return
		}
	}
}

// rw returns what reads and writes the client's connection.
func (c *redisClient) rw() io.ReadWriter {
	if r := newRawIO(c.conn); r != nil {
		return r
	}
	return c.conn
}

// writeLoop writes replies in request order, flushing whenever the next
// reply is not ready yet or none is queued.
func (c *redisClient) writeLoop() {
	w := bufio.NewWriterSize(c.rw(), 16<<10)
	var err error
	for r := range c.q {
		if idle := c.ln.pool.Load().cfg.ClientIdleTimeout; idle > 0 && err == nil {
			// A client that stops reading its replies is idle too.
			_ = c.conn.SetWriteDeadline(time.Now().Add(idle))
		}
		select {
		case <-r.done:
		default:
			if err == nil && w.Buffered() > 0 {
				err = w.Flush()
			}
			<-r.done
		}
		if err == nil {
			err = r.writeReply(w)
		}
		c.finish(r)
		if err == nil && len(c.q) == 0 {
			err = w.Flush()
		}
		if err != nil {
			// The client is gone: wake the reader, drop the rest.
			c.conn.Close()
		}
	}
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
