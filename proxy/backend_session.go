package proxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// session is one live net.Conn with its reader goroutine.
//
// The reader waits for replies on the socket itself, not for ops on a
// channel: a sender only appends its op to the queue under qmu. A channel
// receive made the reader park and be woken once per request besides the
// socket's wake-up, and with two or more threads each such wake-up can
// start another thread to run it.
type session struct {
	conn     net.Conn
	rw       io.ReadWriter // reads and writes conn
	dead     atomic.Bool
	readerWG sync.WaitGroup
	buf      []byte // requests waiting to be written
	bufOps   int    // how many
	// bufDeadline is the deadline of the first of them.
	bufDeadline time.Time
	ins         []insert // large data blocks to write inside buf
	// writing is the requests being written, and their bytes, for the
	// figures of the queue to the server.
	writing, writingBytes int
	spare                 []byte
	spareIns              []insert
	flushing              bool

	// qmu guards the queue of ops written (or being written) and not yet
	// answered, in the order the server answers them. The pool's watchdog
	// reads the first op's deadline (see pool.watch): a deadline on the
	// socket, set and reset per op, cost a timer update per request.
	qmu     sync.Mutex
	queue   []*op
	head    int
	stopped bool // set when the reader stops; enqueue then refuses ops
	// writeDeadline is the deadline of the write under way, or zero; the
	// watchdog reads it under the serverConn's mu.
	writeDeadline time.Time
	// timedOut is set by the watchdog before it closes the connection, so
	// that the reader fails what is queued with ErrTimeout.
	timedOut atomic.Bool
}

// insert is a data block passed by reference, to be written before
// buf[at:].
type insert struct {
	at   int
	data []byte
}

// appendOp appends o's request to the bytes waiting to be written. The
// caller holds the serverConn's mu.
func (s *session) appendOp(o *op) {
	if s.bufOps == 0 {
		s.bufDeadline = o.deadline
	}
	s.bufOps++
	s.buf = append(s.buf, o.buf...)
	if o.data != nil {
		s.buf = append(s.buf, "\r\n"...)
		s.ins = append(s.ins, insert{at: len(s.buf), data: o.data})
		s.buf = append(s.buf, "\r\n"...)
	}
}

// writeOut writes out with its inserts.
func (s *session) writeOut(out []byte, ins []insert) error {
	prev := 0
	for _, in := range ins {
		if _, err := s.rw.Write(out[prev:in.at]); err != nil {
			return err
		}
		if _, err := s.rw.Write(in.data); err != nil {
			return err
		}
		prev = in.at
	}
	_, err := s.rw.Write(out[prev:])
	return err
}

// maxSpare is the largest write buffer a session keeps for reuse.
const maxSpare = 1 << 20

// enqueue queues o to be answered, and reports false, queueing nothing,
// when the reader has stopped or the connection is closed.
func (s *session) enqueue(o *op) bool {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.stopped {
		return false
	}
	s.queue = append(s.queue, o)
	return true
}

// first returns the op the next reply answers, or nil.
func (s *session) first() *op {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.head == len(s.queue) {
		return nil
	}
	return s.queue[s.head]
}

// answered removes the first op, answered.
func (s *session) answered() {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	s.queue[s.head] = nil
	s.head++
	switch {
	case s.head == len(s.queue):
		s.queue, s.head = s.queue[:0], 0
	case s.head >= 64 && 2*s.head >= len(s.queue):
		// A queue that never drains under steady load would grow without
		// bound; moving the live half to the front keeps it at twice
		// what is in flight, at a cost of one copy per op at most.
		n := copy(s.queue, s.queue[s.head:])
		clear(s.queue[n:])
		s.queue, s.head = s.queue[:n], 0
	}
}

// overdue reports whether the session's first op, or the write under
// way, is past its deadline at now. The caller holds the serverConn's mu.
func (s *session) overdue(now time.Time) bool {
	if !s.writeDeadline.IsZero() && now.After(s.writeDeadline) {
		return true
	}
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return s.head < len(s.queue) && now.After(s.queue[s.head].deadline)
}

// stop marks the session stopped, so that enqueue takes no more ops, and
// returns the ops still queued.
func (s *session) stop() []*op {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	s.stopped = true
	rest := s.queue[s.head:]
	s.queue, s.head = nil, 0
	return rest
}

// read pairs replies with ops until the connection fails or the session
// ends; then it fails whatever is still queued, and every later op.
func (s *session) read(b *backend) {
	defer s.readerWG.Done()
	rr := b.pool.newReplies(s.rw)
	var failure error
	var now time.Time // when the replies being read arrived
	for {
		// Blocks until the server sends something, or the watchdog or
		// the session's end closes the connection.
		if rr.Buffered() == 0 {
			err := rr.Wait()
			if err != nil {
				failure = s.failure(b, err)
				break
			}
			now = time.Now()
		}
		var err error
		var o *op
		if err == nil {
			// An op is queued before its bytes are written, so data with
			// no op queued answers nothing. (Data that arrives with an op
			// queued is taken as that op's reply; if it is a stray reply,
			// the op's own reply is read as a bad reply or out of step.)
			if o = s.first(); o == nil {
				err = fmt.Errorf("%w: a reply to no request", rr.badReply())
			}
		}
		if err == nil {
			err = rr.read(o)
			if err == nil || errors.Is(err, ErrServerLoading) {
				b.stats.answered(o, now, b.pool.cfg.Timeout)
			}
		}
		if err == nil || inStep(err) {
			// A value over max_value_size, or one the buffer limits had
			// no room for, was read and dropped: the request fails, the
			// connection and the server are fine. A server still loading
			// its data answered, but is not ready: its reply stands and
			// counts as its failure.
			opErr := b.answered(err)
			s.answered()
			o.finish(opErr)
			continue
		}
		failure = s.failure(b, err)
		break
	}
	if !s.dead.Load() || s.timedOut.Load() {
		// The server closed, failed or timed out the connection; one
		// the proxy closed is not counted.
		b.stats.closed(failure)
	}
	b.stats.conns.Add(-1)
	// Stopped and the queue taken in one step: an op queued before it is
	// failed here, and a sender that comes after finds the session stopped
	// and takes a new connection.
	s.kill()
	rest := s.stop()
	if len(rest) > 0 {
		// Requests failed; a server that closed an idle connection, or a
		// session that ended, failed none.
		b.fail(failure, len(rest))
	}
	for _, o := range rest {
		o.finish(failure)
	}
}

// failure returns the error of the ops a read error leaves unanswered:
// ErrTimeout when the watchdog closed the connection.
func (s *session) failure(b *backend, err error) error {
	if s.timedOut.Load() {
		err = ErrTimeout
	}
	return serverError(b.addr, "", err)
}

// kill closes the connection; the next send replaces the session.
func (s *session) kill() {
	s.dead.Store(true)
	s.conn.Close()
}

// end stops the session: the connection is closed and the reader fails
// what is left. The caller holds the serverConn's mu.
func (s *session) end() {
	s.kill()
	s.readerWG.Wait()
}
