package proxy

import "time"

// redisBudget is a Redis client's reader's redis.Budget: a request's
// bytes past its first 64 KiB, charged three times (as read, as encoded
// for its server, in the server connection's write buffer) to the
// client's charge and the proxy's budget. It waits, up to the pool's
// timeout, for the proxy's budget only: the client's own limit ends its
// round instead (see redisClient.serve), since the requests it holds are
// answered by the same goroutine, once the round is read.
type redisBudget struct{ c *charge }

func (b redisBudget) Reserve(n int) error {
	cost := 3 * int64(n)
	if err := b.c.proxy.acquire(cost, time.Now().Add(b.c.timeout)); err != nil {
		return err
	}
	b.c.held.Add(cost)
	b.c.pending += cost
	return nil
}
