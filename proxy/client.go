package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/proxy/memcache"
)

// pending is one client request on its way: the request, the ops sent for
// it, and the signal that all of them are done. The client's writer
// goroutine takes pendings in request order, so replies keep that order
// whatever order the servers answer in.
type pending struct {
	req   memcache.Request
	pool  *pool
	ops   []*op
	order []int // for a retrieval: the index into ops of each key
	left  atomic.Int32
	done  chan struct{} // receives once when every op is done
	local []byte        // a reply made by the proxy itself
	close bool          // close the connection after this reply
	start time.Time

	// replicated marks a write sent to every replica of its key: the
	// reply is the first one that is not an error, in preference order.
	replicated bool
	// Scratch space to find replicas without allocating.
	idx     []int
	nodeBuf []kolco.Node
}

func (p *pending) opDone(*op) {
	if p.left.Add(-1) == 0 {
		p.done <- struct{}{}
	}
}

// client serves one client connection.
type client struct {
	srv  *Server
	ln   *listener
	conn net.Conn
	q    chan *pending
	free sync.Pool // *pending, reused once written
}

func (s *Server) serveClient(ln *listener, conn net.Conn) {
	p := ln.pool.Load()
	c := &client{srv: s, ln: ln, conn: conn, q: make(chan *pending, p.cfg.MaxPending)}
	c.free.New = func() any { return &pending{done: make(chan struct{}, 1)} }
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
			_ = c.conn.SetReadDeadline(time.Now().Add(ms(idle)))
		}
		p := c.free.Get().(*pending)
		err := r.Read(&p.req)
		// The pool is loaded once the request is in, so that a request
		// read after a reload goes to the new pool.
		pool := c.ln.pool.Load()
		switch {
		case err == nil:
			if pool = c.acquire(pool); pool == nil {
				p.close = true
				p.answerError(ErrPoolRemoved)
				p.left.Store(1)
				p.opDone(nil)
				break
			}
			c.dispatch(pool, p)
		case errors.As(err, &pe):
			pool.stats.clientError()
			p.close = pe.Close
			p.answerError(pe)
			p.left.Store(1)
			p.opDone(nil)
		default:
			c.free.Put(p)
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				c.srv.log.Debug("client read", "remote", c.conn.RemoteAddr(), "err", err)
			}
			return
		}
		closing := p.close // p belongs to the writer once queued
		c.q <- p
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
	for p := range c.q {
		if idle := c.ln.pool.Load().cfg.ClientIdleTimeout; idle > 0 && err == nil {
			// A client that stops reading its replies is idle too: its
			// reader waits on a full queue and no read deadline fires, so
			// the writes carry the deadline.
			_ = c.conn.SetWriteDeadline(time.Now().Add(ms(idle)))
		}
		select {
		case <-p.done:
		default:
			if err == nil && w.Buffered() > 0 {
				err = w.Flush()
			}
			<-p.done
		}
		if err == nil {
			err = c.writeReply(w, p)
		}
		c.finish(p)
		if err == nil && len(c.q) == 0 {
			err = w.Flush()
		}
		if err != nil {
			// The client is gone: wake the reader, drop the rest.
			c.conn.Close()
		}
	}
}

// finish records the request and recycles p.
func (c *client) finish(p *pending) {
	if p.pool != nil {
		p.pool.stats.request(p.req.Cmd, time.Since(p.start))
		p.pool.release()
	}
	for _, o := range p.ops {
		o.reply, o.spans, o.err, o.buf = o.reply[:0], o.spans[:0], nil, o.buf[:0]
	}
	p.ops, p.order, p.local, p.pool, p.close = p.ops[:0], p.order[:0], p.local[:0], nil, false
	p.replicated = false
	c.free.Put(p)
}

// writeReply writes the reply of a finished request.
func (c *client) writeReply(w *bufio.Writer, p *pending) error {
	if len(p.ops) == 0 {
		_, err := w.Write(p.local)
		return err
	}
	switch {
	case p.replicated:
		return writeReplicated(w, p)
	case p.req.Cmd.IsRetrieval() && len(p.ops) > 1:
		return c.writeMerged(w, p)
	case p.req.Cmd == memcache.CmdFlushAll:
		return c.writeBroadcast(w, p)
	}
	o := p.ops[0]
	if o.err != nil {
		return writeServerError(w, p, o)
	}
	if memcache.Quiet(&p.req, o.reply) {
		return nil
	}
	_, err := w.Write(o.reply)
	return err
}

// writeServerError writes the error line of o's failure, unless p is a
// classic command with noreply.
func writeServerError(w *bufio.Writer, p *pending, o *op) error {
	if p.req.Noreply && !p.req.Cmd.IsMeta() {
		return nil
	}
	p.local = appendErrorReply(p.local[:0], o.err)
	_, err := w.Write(p.local)
	return err
}

// answerError makes p's reply the error line of err. memcached answers
// nothing, errors included, to a classic command with noreply (a meta
// command's q hides successes only): a reply the client does not expect
// would shift every later one. A request that closes the connection still
// says why.
func (p *pending) answerError(err error) {
	p.local = p.local[:0]
	if !p.req.Noreply || p.req.Cmd.IsMeta() || p.close {
		p.local = appendErrorReply(p.local, err)
	}
}

// writeMerged writes the VALUE entries of several servers in the order of
// the client's keys. Each server answers its keys in the order it got them,
// so one cursor per server suffices. A failed server's keys are misses;
// only when every server failed is the reply an error.
func (c *client) writeMerged(w *bufio.Writer, p *pending) error {
	var failed *op
	var serverLine []byte // a server's own error line, passed on as it is
	ok := 0
	for _, o := range p.ops {
		if o.err == nil && memcache.IsErrorReply(o.reply) {
			o.err = errors.New(string(bytes.TrimSpace(o.reply)))
			serverLine = o.reply
		}
		if o.err != nil {
			failed = o
		} else {
			ok++
		}
	}
	if ok == 0 {
		if serverLine != nil {
			_, err := w.Write(serverLine)
			return err
		}
		return writeServerError(w, p, failed)
	}
	var cursor [64]int
	cur := cursor[:0]
	if len(p.ops) > len(cursor) {
		cur = make([]int, 0, len(p.ops))
	}
	cur = cur[:len(p.ops)]
	for i, k := range p.req.Keys {
		oi := p.order[i]
		o := p.ops[oi]
		if o.err != nil || cur[oi] >= len(o.spans) {
			continue
		}
		sp := o.spans[cur[oi]]
		if !bytes.Equal(o.reply[sp.KeyStart:sp.KeyEnd], k) {
			continue
		}
		cur[oi]++
		if _, err := w.Write(o.reply[sp.Start:sp.End]); err != nil {
			return err
		}
	}
	_, err := w.WriteString("END\r\n")
	return err
}

// writeReplicated answers a write sent to every replica of its key with
// the first reply, in preference order, that is not an error; when every
// replica failed, with the first failure.
func writeReplicated(w *bufio.Writer, p *pending) error {
	for _, o := range p.ops {
		if o.err == nil && !memcache.IsErrorReply(o.reply) {
			if memcache.Quiet(&p.req, o.reply) {
				return nil
			}
			_, err := w.Write(o.reply)
			return err
		}
	}
	o := p.ops[0]
	if o.err == nil {
		if memcache.Quiet(&p.req, o.reply) {
			return nil
		}
		_, err := w.Write(o.reply) // the server's own error line
		return err
	}
	return writeServerError(w, p, o)
}

// writeBroadcast answers flush_all sent to every server: OK when all said
// OK, else the first failure.
func (c *client) writeBroadcast(w *bufio.Writer, p *pending) error {
	for _, o := range p.ops {
		if o.err == nil && !bytes.Equal(o.reply, []byte("OK\r\n")) {
			o.err = errors.New(string(bytes.TrimSpace(o.reply)))
		}
		if o.err != nil {
			return writeServerError(w, p, o)
		}
	}
	if p.req.Noreply {
		return nil
	}
	_, err := w.WriteString("OK\r\n")
	return err
}

// newOp returns a reusable op of p.
func (p *pending) newOp(cmd memcache.Command, deadline time.Time) *op {
	n := len(p.ops)
	if n < cap(p.ops) && p.ops[:n+1][n] != nil {
		p.ops = p.ops[:n+1]
	} else {
		p.ops = append(p.ops, &op{done: p.opDone})
	}
	o := p.ops[n]
	o.cmd, o.deadline = cmd, deadline
	return o
}
