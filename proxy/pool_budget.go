package proxy

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// The proxy holds a request until its reply is written, and a reply until
// the client reads it: memory is bounded by what it may hold, not by a
// cap on one value. Two budgets bound it. The proxy's (kolco.buffer_limit)
// bounds the bytes held for every client together; a client's
// (client_buffer_limit) bounds what one client's requests in flight hold
// before the proxy stops reading more of them. Both count the data blocks
// of requests and the values of replies, and long request lines; values
// under chargeMin are not counted one by one, since a client has at most
// max_pending requests in flight, and a reply's small values are counted
// once they add up to chargeMin.
const chargeMin = 4 << 10

// byRef is the size over which a request's data block is passed to the
// server's connection by reference rather than copied into its write
// buffer; a front drops a request buffer that large once the request is
// done (see mcRequest.reset, and redis.KeepMax), so it is never reused
// while a write might still read it.
const byRef = 64 << 10

// errBufferFull is the error of a reply's value that the proxy's budget
// has no room for. Its text says what is full once, without the package's
// prefix, since it is part of a server error's line.
var errBufferFull error = noRoom("kolco.buffer_limit is full")

// noRoom is an error that is [ErrNoRoom] in other words.
type noRoom string

func (e noRoom) Error() string        { return string(e) }
func (e noRoom) Is(target error) bool { return target == ErrNoRoom }

// budget is a count of bytes held against a limit, with waiters served in
// order of arrival, so that a large request is not overtaken forever by
// small ones.
type budget struct {
	// mu guards the fields below.
	mu      sync.Mutex
	limit   int64
	used    int64
	most    int64 // the most used at once
	high    int64 // the most used at once since highSinceLast
	waiters []*budgetWaiter
}

type budgetWaiter struct {
	n     int64
	ready chan struct{} // closed when n is granted
}

func newBudget(limit int64) *budget { return &budget{limit: limit} }

// tryAcquire takes n bytes if they fit now and nobody waits.
func (b *budget) tryAcquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.waiters) > 0 || b.used+n > b.limit {
		return false
	}
	b.took(n)
	return true
}

// acquire takes n bytes, waiting for them until deadline. The error wraps
// [ErrNoRoom].
func (b *budget) acquire(n int64, deadline time.Time) error {
	b.mu.Lock()
	if n > b.limit {
		b.mu.Unlock()
		return fmt.Errorf("%w: %d bytes, over kolco.buffer_limit %d", ErrNoRoom, n, b.limit)
	}
	if len(b.waiters) == 0 && b.used+n <= b.limit {
		b.took(n)
		b.mu.Unlock()
		return nil
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-w.ready:
		return nil
	case <-t.C:
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.ready: // granted as the timer fired
		return nil
	default:
	}
	for i, o := range b.waiters {
		if o == w {
			b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
			break
		}
	}
	b.grant() // the waiter gone may have held back smaller ones
	return fmt.Errorf("%w: %d bytes did not fit in kolco.buffer_limit %d in time", ErrNoRoom, n, b.limit)
}

// release returns n bytes.
func (b *budget) release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.grant()
	b.mu.Unlock()
}

// setLimit changes the limit, as a reload does.
func (b *budget) setLimit(n int64) {
	b.mu.Lock()
	b.limit = n
	b.grant()
	b.mu.Unlock()
}

// inUse returns the bytes held.
func (b *budget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// highSinceLast returns the most bytes held at once since it was last called,
// and the bytes held now.
func (b *budget) highSinceLast() (high, now int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	high, b.high = b.high, b.used
	return high, b.used
}

// peak returns the most bytes held at once.
func (b *budget) peak() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.most
}

// took records that n bytes were taken. The caller holds mu.
func (b *budget) took(n int64) {
	b.used += n
	b.most = max(b.most, b.used)
	b.high = max(b.high, b.used)
}

// grant wakes the waiters that now fit, in order. The caller holds mu.
func (b *budget) grant() {
	for len(b.waiters) > 0 {
		w := b.waiters[0]
		if b.used+w.n > b.limit {
			return
		}
		b.took(w.n)
		close(w.ready)
		b.waiters = b.waiters[1:]
	}
}

// charge is what one client's requests in flight hold, against the
// client's limit and the proxy's budget. Its Reserve is the budget of the
// client's request reader, in its front's codec; the client's requests
// and their ops add to it, and the client's writer releases what a
// request held once its reply is written.
type charge struct {
	proxy    *budget
	limit    int64
	replicas int           // copies of a key in the client's pool
	timeout  time.Duration // how long a request waits for room
	held     atomic.Int64
	freed    chan struct{} // signalled when held drops
	// flush writes the client's queued requests, before its reader waits
	// for them to be answered (see flushBatch).
	flush func()
	// pending is what the reader reserved for the request it is reading;
	// only the reader touches it.
	pending int64
}

func newCharge(proxy *budget, cfg *PoolConfig) *charge {
	return &charge{proxy: proxy, limit: int64(cfg.ClientBufferLimit), replicas: cfg.Replicas,
		timeout: cfg.Timeout, freed: make(chan struct{}, 1)}
}

// Reserve makes room for n bytes of the request being read: a data block
// or a part of a long line. It waits, up to the pool's timeout, until the
// client's earlier requests leave room under its limit (or it has none in
// flight: one request alone may be larger), then for the proxy's budget.
// A data block is charged for each copy the proxy makes of it: one when it
// is passed by reference, else one and two per server it goes to.
func (c *charge) Reserve(n int) error {
	if n < chargeMin {
		return nil
	}
	cost := int64(n)
	if n <= byRef {
		cost *= int64(1 + 2*c.replicas)
	}
	deadline := time.Now().Add(c.timeout)
	for {
		h := c.held.Load()
		if h == 0 || h+cost <= c.limit {
			break
		}
		c.flushQueued()
		t := time.NewTimer(time.Until(deadline))
		select {
		case <-c.freed:
			t.Stop()
		case <-t.C:
			return fmt.Errorf("%w: the client's requests in flight hold %d bytes of its client_buffer_limit %d", ErrNoRoom, h, c.limit)
		}
	}
	c.flushQueued() // the proxy's room may wait for the client's own requests
	if err := c.proxy.acquire(cost, deadline); err != nil {
		return err
	}
	c.held.Add(cost)
	c.pending += cost
	return nil
}

// take returns what was reserved for the request just read.
func (c *charge) take() int64 {
	n := c.pending
	c.pending = 0
	return n
}

// add charges n bytes of a reply, if the proxy's budget has room; the
// client's limit then holds its reader back rather than fail the reply.
func (c *charge) add(n int64) bool {
	if !c.proxy.tryAcquire(n) {
		return false
	}
	c.held.Add(n)
	return true
}

// release returns n bytes and wakes the reader if it waits for room.
func (c *charge) release(n int64) {
	if n == 0 {
		return
	}
	c.held.Add(-n)
	c.proxy.release(n)
	select {
	case c.freed <- struct{}{}:
	default:
	}
}

// wait blocks while the client holds its limit or more, until its
// requests in flight are answered: the proxy stops reading from a client
// whose replies pile up, as it does at max_pending requests.
func (c *charge) wait() {
	for c.held.Load() >= c.limit {
		c.flushQueued()
		<-c.freed
	}
}

func (c *charge) flushQueued() {
	if c.flush != nil {
		c.flush()
	}
}

// Reserve charges a value of a server's reply to the op's client; small
// values are counted once they add up to chargeMin. It fails, without
// waiting, when the proxy's budget has no room: a server's reader must
// not wait for clients, and the value is dropped instead.
func (o *op) Reserve(n int) error {
	if o.charge == nil {
		return nil
	}
	if n < chargeMin {
		o.small += n
		if o.small < chargeMin {
			return nil
		}
		n, o.small = o.small, 0
	}
	if !o.charge.add(int64(n)) {
		return errBufferFull
	}
	o.held += int64(n)
	return nil
}
