package proxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// client serves one client connection.
type client struct {
	srv  *Server
	ln   *listener
	conn net.Conn
	q    chan *request
	free sync.Pool // *request, reused once written
}

func (s *Server) serveClient(ln *listener, conn net.Conn) {
	p := ln.pool.Load()
	if p.cfg.Redis {
		s.serveRedis(ln, conn)
		return
	}
	c := &client{srv: s, ln: ln, conn: conn, q: make(chan *request, p.cfg.MaxPending)}
	c.free.New = func() any { return newRequest() }
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

// readLoop reads requests until the client closes, errs beyond resync,
// asks to quit, or the server shuts down; every request read is queued.
func (c *client) readLoop() {
	r := memcache.NewReader(c.rw(), c.limits())
	// Declared once: errors.As makes it escape, which inside the loop
	// cost an allocation per request.
	var pe *memcache.Error
	for {
		if idle := c.ln.pool.Load().cfg.ClientIdleTimeout; idle > 0 {
			// Renewed before every request, so that a client that keeps
			// sending is never cut, and one that stalls mid-request is.
			_ = c.conn.SetReadDeadline(time.Now().Add(idle))
		}
		rq := c.free.Get().(*request)
		err := r.Read(&rq.req)
		// The pool is loaded once the request is in, so that a request
		// read after a reload goes to the new pool.
		pool := c.ln.pool.Load()
		switch {
		case err == nil:
			if pool = c.acquire(pool); pool == nil {
				rq.close = true
				rq.answerError(ErrPoolRemoved)
				rq.ready()
				break
			}
			pool.dispatch(rq)
		case errors.As(err, &pe):
			pool.stats.clientError()
			rq.close = pe.Close
			rq.answerError(pe)
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

// acquire counts a request into the listener's current pool, following
// reloads; nil means the pool was removed.
func (c *client) acquire(pool *pool) *pool {
	for !pool.acquire() {
		next := c.ln.pool.Load()
		if next == pool {
			return nil
		}
		pool = next
	}
	return pool
}

// rw returns what reads and writes the client's connection.
func (c *client) rw() io.ReadWriter {
	if r := newRawIO(c.conn); r != nil {
		return r
	}
	return c.conn
}

func (c *client) limits() memcache.Limits {
	cfg := c.ln.pool.Load().cfg
	return memcache.Limits{MaxValue: cfg.MaxValueSize, MaxKeys: cfg.MaxKeys}
}

// writeLoop writes replies in request order, flushing whenever the next
// reply is not ready yet or none is queued.
func (c *client) writeLoop() {
	w := bufio.NewWriterSize(c.rw(), 16<<10)
	var err error
	for r := range c.q {
		if idle := c.ln.pool.Load().cfg.ClientIdleTimeout; idle > 0 && err == nil {
			// A client that stops reading its replies is idle too: its
			// reader waits on a full queue and no read deadline fires, so
			// the writes carry the deadline.
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

// finish records the request and recycles it.
func (c *client) finish(r *request) {
	if r.pool != nil {
		r.pool.stats.request(r.req.Cmd, time.Since(r.start))
		r.pool.release()
	}
	r.reset()
	c.free.Put(r)
}
