package proxy

import (
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// A shutdown, or a handover of the listening sockets to a new process,
// drains the clients: each is closed at the first moment it is idle -
// between requests, nothing of the next one received, every request it
// sent answered - so that no request a client sent goes unanswered. A
// client idle already is woken by a read deadline of now; one that is
// reading a request is left alone until it is done. A connection accepted
// just before the listener closed has not sent its first request yet: it
// gets drainGrace to send it, and its answer, before it is closed.
const drainGrace = time.Second

// drainState is a client's part in a drain.
type drainState struct {
	// mu orders drain's read deadline before the reader's reset of it.
	mu        sync.Mutex
	draining  atomic.Bool
	inRequest atomic.Bool // the reader reads a request
	served    bool        // a request was read (the reader's alone)
	graced    bool        // the first request was waited for
}

// drain asks the client to close once it is idle.
func (c *client) drain() {
	d := &c.drains
	d.mu.Lock()
	defer d.mu.Unlock()
	d.draining.Store(true)
	if !d.inRequest.Load() {
		// The reader waits for the next request, or is about to: wake it.
		_ = c.conn.SetReadDeadline(time.Now())
	}
}

// next waits for the next request to begin arriving and reports whether
// to read it: false when the client is drained and idle. With an error
// other than a drain's, it reports true and the read returns the error.
//
// inRequest and draining are a store-then-load pair on each side (next,
// drain): one side always sees the other's store, so either drain sets no
// deadline, or next sees draining and resets the deadline under mu, after
// drain set it, before reading the request.
func (c *client) next(r requestReader) bool {
	d := &c.drains
	if idle := c.ln.pool.Load().cfg.ClientIdleTimeout; idle > 0 {
		// Renewed before every request, so that a client that keeps
		// sending is never cut, and one that stalls mid-request is. Set
		// before inRequest is cleared, so that a drain's deadline, set
		// after it, wins.
		_ = c.conn.SetReadDeadline(time.Now().Add(idle))
	}
	for {
		d.inRequest.Store(false)
		if d.draining.Load() && d.served && r.Buffered() == 0 {
			return false
		}
		err := r.Wait()
		if err != nil {
			if !d.draining.Load() || !isTimeout(err) {
				return true
			}
			if d.served || d.graced {
				return false
			}
			d.graced = true
			_ = c.conn.SetReadDeadline(time.Now().Add(drainGrace))
			continue
		}
		d.inRequest.Store(true)
		if d.draining.Load() {
			d.mu.Lock()
			_ = c.conn.SetReadDeadline(c.readDeadline())
			d.mu.Unlock()
		}
		d.served = true
		return true
	}
}

// requestReader is a client's reader of requests, memcached's or Redis's.
type requestReader interface {
	// Wait blocks until the next request has begun to arrive.
	Wait() error
	// Buffered returns the bytes read from the client and not yet read
	// as requests.
	Buffered() int
}

// readDeadline returns the read deadline of a request about to be read:
// the idle timeout's, or none.
func (c *client) readDeadline() time.Time {
	if idle := c.ln.pool.Load().cfg.ClientIdleTimeout; idle > 0 {
		return time.Now().Add(idle)
	}
	return time.Time{}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}
