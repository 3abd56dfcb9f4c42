package proxy

import (
	"bufio"
	"errors"
	"io"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// client serves one client connection.
type client struct {
	srv    *Server
	ln     *listener
	conn   net.Conn
	q      chan *request
	free   sync.Pool // *request, reused once written
	charge *charge
	drains drainState
	batch  flushBatch
	gate   warmGate
	redis  bool // of a Redis pool
}

func (s *Server) newClient(ln *listener, conn net.Conn) *client {
	p := ln.pool.Load()
	if p.cfg.Redis {
		// Served by a redisClient (see serveRedis), which takes the
		// client's part in drains from it.
		return &client{srv: s, ln: ln, conn: conn, redis: true}
	}
	c := &client{srv: s, ln: ln, conn: conn, q: make(chan *request, p.cfg.MaxPending),
		charge: newCharge(s.budget, p.cfg)}
	c.charge.flush = c.batch.flush
	c.free.New = func() any { return newRequest(c.charge, &c.batch, &c.gate) }
	return c
}

// serve serves the client until it closes, quits or is drained.
func (c *client) serve() {
	if c.redis {
		c.serveRedis()
		return
	}
	p, conn := c.ln.pool.Load(), c.conn
	in := &byteCount{rw: c.rw(), total: &p.stats.bytesIn, before: c.batch.flush}
	out := &byteCount{rw: c.rw(), total: &p.stats.bytesOut}
	var wg sync.WaitGroup
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		werr = c.writeLoop(out)
	}()
	rerr := c.readLoop(in)
	close(c.q)
	wg.Wait()
	conn.Close()
	in.flush()
	out.flush()
	switch {
	case werr != nil || rerr != nil && !errors.Is(rerr, io.EOF) && !errors.Is(rerr, net.ErrClosed):
		p.stats.clientErr.Add(1)
	case rerr == nil || errors.Is(rerr, io.EOF):
		p.stats.clientEOF.Add(1) // the client ended the connection, or quit
	}
}

// byteCount counts the bytes read or written through rw, adding them to
// total every 64 KiB and when flushed: a client's bytes reach the pool's
// figures without a shared counter touched per request.
type byteCount struct {
	rw    io.ReadWriter
	n     int
	total *atomic.Uint64
	// before, when set, is called before each read: the client's reader
	// writes its queued requests before it waits for more (flushBatch).
	before func()
}

func (b *byteCount) Read(p []byte) (int, error) {
	if b.before != nil {
		b.before()
	}
	n, err := b.rw.Read(p)
	b.count(n)
	return n, err
}

func (b *byteCount) Write(p []byte) (int, error) {
	n, err := b.rw.Write(p)
	b.count(n)
	return n, err
}

func (b *byteCount) count(n int) {
	if b.n += n; b.n >= 64<<10 {
		b.flush()
	}
}

func (b *byteCount) flush() {
	b.total.Add(uint64(b.n))
	b.n = 0
}

// readLoop reads requests until the client closes, errs beyond resync,
// asks to quit, or the server shuts down; every request read is queued.
// It returns the read error that ended it, nil when the client quit or
// the connection had to be closed.
func (c *client) readLoop(in io.Reader) error {
	defer c.batch.flush() // what the last requests queued
	r := memcache.NewReader(in, c.limits())
	// Declared once: errors.As makes it escape, which inside the loop
	// cost an allocation per request.
	var pe *memcache.Error
	for {
		c.charge.wait()
		if !c.next(r) {
			return nil // drained
		}
		rq := c.free.Get().(*request)
		err := r.Read(&rq.req)
		rq.held = c.charge.take()
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
			c.charge.release(rq.held)
			rq.held = 0
			c.free.Put(rq)
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				c.srv.log.Debug("client read", "remote", c.conn.RemoteAddr(), "err", err)
			}
			return err
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
			return nil
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

// limits are the pool's, with no cap on a line of its own: a get of any
// number of keys is read, as memcached reads it, within the buffer limits.
func (c *client) limits() memcache.Limits {
	cfg := c.ln.pool.Load().cfg
	return memcache.Limits{MaxValue: cfg.MaxValueSize, MaxKeys: cfg.MaxKeys, MaxLine: math.MaxInt, Budget: c.charge}
}

// writeLoop writes replies in request order, flushing whenever the next
// reply is not ready yet or none is queued, and returns the first write
// error.
func (c *client) writeLoop(out io.Writer) error {
	w := bufio.NewWriterSize(out, 16<<10)
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
	return err
}

// finish records the request, releases what it held and recycles it.
func (c *client) finish(r *request) {
	if r.pool != nil {
		r.pool.stats.request(r.req.Cmd, time.Since(r.start))
		r.pool.release()
	}
	c.charge.release(r.heldBytes())
	if r.pool != nil {
		if r.failed {
			r.pool.stats.forwardErrors.Add(1)
		}
		if len(r.ops) > 1 && r.req.Cmd.IsRetrieval() {
			r.pool.stats.fragments.Add(uint64(len(r.ops)))
		}
	}
	r.reset()
	c.free.Put(r)
}
