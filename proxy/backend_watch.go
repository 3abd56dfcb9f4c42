package proxy

import "time"

// A request that a server does not answer within the pool's timeout fails
// with ErrTimeout, and so does every request queued behind it on the same
// connection, which is closed. The pool's watchdog checks each connection
// every tenth of the timeout (at least every 100 ms, at most every
// millisecond), so a request fails between timeout and timeout plus a
// tenth: deadlines set on the socket for each request cost a runtime timer
// update each, two per request, which the watchdog's few checks a second
// replace.
func watchEvery(timeout time.Duration) time.Duration {
	return min(max(timeout/10, time.Millisecond), 100*time.Millisecond)
}

// watch closes, until the pool closes, the connections whose first
// request, or whose write under way, is past its deadline.
func (p *pool) watch() {
	t := time.NewTicker(watchEvery(p.cfg.Timeout))
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case now := <-t.C:
			for _, b := range p.backends {
				for _, c := range b.conns {
					c.timeOut(now)
				}
			}
		}
	}
}

// timeOut closes the connection's session if a request on it is past its
// deadline at now; the session's reader fails its requests with
// ErrTimeout.
func (c *serverConn) timeOut(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.s; s != nil && !s.dead.Load() && s.overdue(now) {
		s.timedOut.Store(true)
		s.kill()
	}
}
