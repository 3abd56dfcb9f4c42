package proxy

import (
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
	spare    []byte
	flushing bool

	// qmu guards the queue of ops written (or being written) and not yet
	// answered, in the order the server answers them, and the read
	// deadline: while an op is queued, the deadline is the first op's.
	qmu     sync.Mutex
	queue   []*op
	head    int
	stopped bool // set when the reader stops; enqueue then refuses ops
}

// enqueue queues o to be answered, and reports false, queueing nothing,
// when the reader has stopped or the connection is closed.
func (s *session) enqueue(o *op) bool {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.stopped {
		return false
	}
	if s.head == len(s.queue) && s.conn.SetReadDeadline(o.deadline) != nil {
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

// answered removes the first op, answered, and sets the read deadline to
// the next op's, or none when the queue is empty.
func (s *session) answered() error {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	s.queue[s.head] = nil
	s.head++
	switch {
	case s.head == len(s.queue):
		s.queue, s.head = s.queue[:0], 0
		return s.conn.SetReadDeadline(time.Time{})
	case s.head >= 64 && 2*s.head >= len(s.queue):
		// A queue that never drains under steady load would grow without
		// bound; moving the live half to the front keeps it at twice
		// what is in flight, at a cost of one copy per op at most.
		n := copy(s.queue, s.queue[s.head:])
		clear(s.queue[n:])
		s.queue, s.head = s.queue[:n], 0
	}
	return s.conn.SetReadDeadline(s.queue[s.head].deadline)
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
	for {
		// Blocks until the server sends something: while nothing is
		// queued there is no deadline, and a close ends the wait.
		err := rr.Wait()
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
		}
		if err == nil || inStep(err) {
			// A value over max_value_size was read and dropped: the
			// request fails, the connection and the server are fine. A
			// server still loading its data answered, but is not ready:
			// its reply stands and counts as its failure.
			opErr := b.answered(err)
			err = s.answered()
			o.finish(opErr)
		}
		if err != nil {
			failure = serverError(b.addr, "", err)
			break
		}
	}
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
