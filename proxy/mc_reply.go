package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// The way out of a memcached request: each server's reply read into the
// op it answers, then the client's writer writing the replies in the
// order the requests were read, merged when a request went to several
// servers.

func (memcacheFront) replies(r io.Reader, b *backend) replies {
	return &mcReplies{rr: memcache.NewReplyReader(r, b.pool.cfg.MaxValueSize), stats: b.stats}
}

// mcReplies reads memcached's replies, counting the hits and misses of
// retrievals in the server's figures.
type mcReplies struct {
	rr    *memcache.ReplyReader
	stats *serverStats
}

func (m *mcReplies) Wait() error     { return m.rr.Wait() }
func (m *mcReplies) Buffered() int   { return m.rr.Buffered() }
func (m *mcReplies) badReply() error { return memcache.ErrBadReply }

// inStep: a value over max_value_size, or one the buffer limits had no
// room for, was read and dropped.
func (m *mcReplies) inStep(err error) bool { return memcache.Dropped(err) }

func (m *mcReplies) read(o *op) (err error) {
	mo := mcOf(o)
	m.rr.Budget = o
	o.reply, mo.spans, err = m.rr.Read(o.reply[:0], mo.cmd, mo.spans[:0])
	if err != nil {
		return err
	}
	switch {
	case mo.cmd.IsRetrieval():
		m.stats.hits.Add(uint64(len(mo.spans)))
		m.stats.misses.Add(uint64(max(mo.keys-len(mo.spans), 0)))
	case mo.cmd == memcache.CmdMetaGet && len(o.reply) >= 2:
		if o.reply[0] == 'E' && o.reply[1] == 'N' {
			m.stats.misses.Add(1)
		} else if o.reply[0] == 'V' || o.reply[0] == 'H' {
			m.stats.hits.Add(1)
		}
	}
	return nil
}

// writeLoop writes replies in request order, flushing whenever the next
// reply is not ready yet or none is queued, and returns the first write
// error.
func (c *mcClient) writeLoop(out io.Writer) error {
	w := bufio.NewWriterSize(out, 16<<10)
	var err error
	for r := range c.q {
		if idle := c.pool.Load().cfg.ClientIdleTimeout; idle > 0 && err == nil {
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
			if r.pool != nil && r.pool.traffic != nil {
				r.sampleTraffic()
			}
		}
		if r.pool != nil && r.pool.hot != nil {
			r.hot.done(r.pool, &r.req, r.ops, !r.replicated && (r.warm == nil || !r.warm.active))
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
func (c *mcClient) finish(r *mcRequest) {
	if r.pool != nil && len(r.ops) > 1 && r.req.Cmd.IsRetrieval() {
		r.pool.stats.fragments.Add(uint64(len(r.ops)))
	}
	r.call.finish(c.charge, int(r.req.Cmd))
	r.reset()
	c.free.Put(r)
}

// writeReply writes the reply of a finished request.
func (r *mcRequest) writeReply(w *bufio.Writer) error {
	if len(r.ops) == 0 {
		_, err := w.Write(r.local)
		return err
	}
	if r.warm != nil && r.warm.active {
		if done, err := r.writeWarm(w); done {
			return err
		}
	}
	switch {
	case r.replicated:
		return r.writeReplicated(w)
	case r.req.Cmd.IsRetrieval() && len(r.ops) > 1:
		return r.writeMerged(w)
	case r.req.Cmd == memcache.CmdFlushAll:
		return r.writeBroadcast(w)
	}
	o := r.ops[0]
	if o.err != nil {
		return r.writeError(w, o.err)
	}
	return r.writeServerReply(w, o.reply)
}

// writeServerReply writes a server's reply as it is, unless the client
// asked not to see it.
func (r *mcRequest) writeServerReply(w *bufio.Writer, reply []byte) error {
	if memcache.Quiet(&r.req, reply) {
		return nil
	}
	_, err := w.Write(reply)
	return err
}

// writeError writes the error line of err, unless r is a classic command
// with noreply.
func (r *mcRequest) writeError(w *bufio.Writer, err error) error {
	r.answerError(err)
	_, werr := w.Write(r.local)
	return werr
}

// writeMerged writes the VALUE entries of several servers in the order of
// the client's keys (see memcache.Splitter), a value found by falling back
// in a migration window in place of a miss. A failed server's keys are
// misses; only when every server failed is the reply an error: a server's
// own error line when one sent one, passed on as it is, else the proxy's.
func (r *mcRequest) writeMerged(w *bufio.Writer) error {
	var failed error
	var serverLine []byte
	ok := 0
	replies := r.replies[:0]
	for _, o := range r.ops {
		reply := memcache.Reply{Data: o.reply, Spans: mcOf(o).spans}
		switch {
		case o.err != nil:
			failed, reply = o.err, memcache.Reply{}
		case memcache.IsErrorReply(o.reply):
			serverLine = o.reply
		default:
			ok++
		}
		replies = append(replies, reply)
	}
	r.replies = replies
	if ok == 0 {
		if serverLine != nil {
			return r.writeServerReply(w, serverLine)
		}
		return r.writeError(w, failed)
	}
	r.split.Begin(replies)
	for i := range r.req.Keys {
		var err error
		if v := r.split.Value(i); v != nil {
			_, err = w.Write(v)
		} else {
			err = r.warm.writeFill(w, i)
		}
		if err != nil {
			return err
		}
	}
	_, err := w.WriteString("END\r\n")
	return err
}

// writeReplicated answers a write sent to every replica of its key with
// the first reply, in preference order, that is not an error; when every
// replica failed, with the first failure: the server's own error line, or
// the proxy's.
func (r *mcRequest) writeReplicated(w *bufio.Writer) error {
	for _, o := range r.ops {
		if o.err == nil && !memcache.IsErrorReply(o.reply) {
			return r.writeServerReply(w, o.reply)
		}
	}
	if o := r.ops[0]; o.err != nil {
		return r.writeError(w, o.err)
	}
	return r.writeServerReply(w, r.ops[0].reply)
}

// writeBroadcast answers flush_all sent to every server: OK when all said
// OK, else the first failure: the proxy's error line, or the server's own,
// passed on as it is.
func (r *mcRequest) writeBroadcast(w *bufio.Writer) error {
	for i, o := range r.ops {
		switch {
		case o.err != nil:
			return r.writeError(w, o.err)
		case memcache.IsErrorReply(o.reply):
			return r.writeServerReply(w, o.reply)
		case !bytes.Equal(o.reply, []byte("OK\r\n")):
			bad := fmt.Errorf("%w: %q", memcache.ErrBadReply, o.reply)
			return r.writeError(w, &ServerError{Addr: r.pool.backends[i].addr, Err: bad})
		}
	}
	if r.req.Noreply {
		return nil
	}
	_, err := w.WriteString("OK\r\n")
	return err
}

// appendErrorReply appends the line a client reads for a request that
// failed with err: a protocol error's own reply (CLIENT_ERROR ..., ERROR),
// else SERVER_ERROR and the cause as nutcracker says it (appendReplyCause).
func appendErrorReply(dst []byte, err error) []byte {
	var pe *memcache.Error
	if errors.As(err, &pe) {
		return append(dst, pe.Reply...)
	}
	dst = append(dst, "SERVER_ERROR "...)
	dst = appendReplyCause(dst, err)
	return append(dst, "\r\n"...)
}
