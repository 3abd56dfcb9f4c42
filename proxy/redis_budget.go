package proxy

import (
	"errors"
	"fmt"
	"time"
)

// redisBudget is a Redis client's reader's redis.Budget: a request's
// bytes past its first 64 KiB, charged three times to the client's charge
// and the proxy's budget, as the reader asks (a bulk string whole, once
// its length is read). Three copies are the most a request's bytes take:
// as read, as encoded for its server, in the server connection's write
// buffer; an argument over byRef is passed to the server by reference
// and held once, in a read buffer that grew to it by doubling, whose
// earlier, smaller copies are garbage until collected. The client's own
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

func (b redisBudget) Reserve(n int) error {
	cost := 3 * int64(n)
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
