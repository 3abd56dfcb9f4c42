package proxy

import (
	"errors"
	"fmt"
	"time"
)

// redisBudget is a Redis client's reader's redis.BulkBudget: a request's
// bytes past its first 64 KiB, charged three times to the client's charge
// and the proxy's budget, as the reader asks (a bulk string whole, once
// its length is read). Three copies are the most a request's bytes take:
// as read, as encoded for its server, in the server connection's write
// buffer; an argument over byRef is passed to the server by reference
// and held once, and charged once. The client's own
// limit ends its round instead (see redisClient.serve), since the requests
// it holds are answered by the same goroutine, once the round is read; for
// the same reason, a request the proxy's budget has no room for ends the
// round read so far before it waits, as a memcached client's reader writes
// its queued requests before it waits (see charge.Reserve): the client then
// waits, up to the pool's timeout, for other clients' bytes only. A request
// that alone would pass kolco.buffer_limit fails at once.
type redisBudget struct {
	c *charge
	// endRound answers the requests of the round read so far, which
	// releases what they hold; false when their replies could not be
	// written.
	endRound func() bool
}

// errClientGone is the error of a request read after its client's
// earlier replies could not be written: it is never answered.
var errClientGone = errors.New("the client's connection failed")

func (b redisBudget) Reserve(n int) error { return b.reserve(3 * int64(n)) }

// ReserveBulk charges an argument of over 64 KiB once: it is passed to its
// server by reference (see redis.Splitter.AppendPartRef), unless its
// request is split or holds a larger one, whose copies are charged when
// it is sent (see chargeCopies).
func (b redisBudget) ReserveBulk(n int) error { return b.reserve(int64(n)) }

func (b redisBudget) reserve(cost int64) error {
	if limit := b.c.proxy.limitNow(); b.c.pending+cost > limit {
		// The request alone would pass the proxy's limit: waiting
		// for the others cannot make room for it.
		return fmt.Errorf("%w: a request of over %d bytes, over kolco.buffer_limit %d", ErrNoRoom, b.c.pending+cost, limit)
	}
	if !b.c.proxy.tryAcquire(cost) {
		// The round's earlier requests are answered before this
		// one waits: the room it waits for may be theirs.
		if b.c.held.Load() > b.c.pending && b.endRound != nil && !b.endRound() {
			return errClientGone
		}
		if err := b.c.proxy.acquire(cost, time.Now().Add(b.c.timeout)); err != nil {
			return err
		}
	}
	b.c.held.Add(cost)
	b.c.pending += cost
	return nil
}

// limitNow returns the budget's limit.
func (b *budget) limitNow() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit
}

// chargeCopies charges the copies of r's arguments over byRef that are
// not passed by reference, two more each (as encoded, as written): all of
// them when r is split over servers, else all but the largest. It fails,
// without waiting, when the proxy's budget has no room. The caller asks
// it only of a request of over byRef bytes, the only kind that may hold
// such an argument.
func (c *redisClient) chargeCopies(r *redisRequest, parts int) error {
	var copied, largest int64
	for _, a := range r.req.Args {
		if n := int64(len(a)); n > byRef {
			copied += n
			largest = max(largest, n)
		}
	}
	if parts == 1 {
		copied -= largest
	}
	if copied == 0 {
		return nil
	}
	if !c.charge.add(2 * copied) {
		return fmt.Errorf("%w: %d bytes of copies of the request's values did not fit in kolco.buffer_limit", ErrNoRoom, 2*copied)
	}
	r.held += 2 * copied
	return nil
}
