package proxy

import (
	"bufio"
	"bytes"
	"fmt"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// writeReply writes the reply of a finished request.
func (r *request) writeReply(w *bufio.Writer) error {
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
func (r *request) writeServerReply(w *bufio.Writer, reply []byte) error {
	if memcache.Quiet(&r.req, reply) {
		return nil
	}
	_, err := w.Write(reply)
	return err
}

// writeError writes the error line of err, unless r is a classic command
// with noreply.
func (r *request) writeError(w *bufio.Writer, err error) error {
	r.answerError(err)
	_, werr := w.Write(r.local)
	return werr
}

// writeMerged writes the VALUE entries of several servers in the order of
// the client's keys. Each server answers its keys in the order it got them,
// so one cursor per server suffices. A failed server's keys are misses;
// only when every server failed is the reply an error: a server's own error
// line when one sent one, passed on as it is, else the proxy's.
func (r *request) writeMerged(w *bufio.Writer) error {
	var failed error
	var serverLine []byte
	ok := 0
	for _, o := range r.ops {
		switch {
		case o.err != nil:
			failed = o.err
		case memcache.IsErrorReply(o.reply):
			serverLine = o.reply
		default:
			ok++
		}
	}
	if ok == 0 {
		if serverLine != nil {
			return r.writeServerReply(w, serverLine)
		}
		return r.writeError(w, failed)
	}
	var cursor [64]int
	cur := cursor[:0]
	if len(r.ops) > len(cursor) {
		cur = make([]int, 0, len(r.ops))
	}
	cur = cur[:len(r.ops)]
	for i, k := range r.req.Keys {
		oi := r.order[i]
		o := r.ops[oi]
		// An error line has no spans: its keys are misses too.
		if o.err != nil || cur[oi] >= len(o.spans) {
			if err := r.writeFill(w, i); err != nil {
				return err
			}
			continue
		}
		sp := o.spans[cur[oi]]
		if !bytes.Equal(o.reply[sp.KeyStart:sp.KeyEnd], k) {
			if err := r.writeFill(w, i); err != nil {
				return err
			}
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
// replica failed, with the first failure: the server's own error line, or
// the proxy's.
func (r *request) writeReplicated(w *bufio.Writer) error {
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
func (r *request) writeBroadcast(w *bufio.Writer) error {
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
