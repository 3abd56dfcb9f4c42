package proxy

import "time"

// The pool's timeout bounds how long a server leaves the proxy waiting,
// not how long a request takes: a request fails when it is past its
// deadline (timeout after it was sent) and the server has moved nothing
// for it for a timeout - its reply has not begun, or stopped coming, or
// its write stopped being taken. A value of 100 MB moves in a few seconds
// under the default 1 s, since bytes keep moving; a server that stops
// (killed, paused, stuck in a slow command) still fails its requests a
// timeout after it stopped. nutcracker counts its timeout from the moment
// a request is queued for the server to the end of its reply, whatever
// moves meanwhile, and has no timeout by default.

// A request that a server does not answer within the pool's timeout (with
// nothing moving meanwhile, see stalled) fails with
// ErrTimeout, and so does every request queued behind it on the same
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
// request, or whose write under way, is past its deadline: those of the
// pool's servers, and those of its former servers (see
// migrations.backendFor), which a request for a key still there reads
// or moves it from while a store's move runs. Without them a request to
// a former server that stopped answering waited for as long as it did
// (TestStoreRequestToAStalledRemovedServerTimesOut).
func (p *pool) watch() {
	t := time.NewTicker(watchEvery(p.cfg.Timeout))
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case now := <-t.C:
			for _, b := range p.backends {
				b.timeOut(now)
			}
			if f := p.mig.watched.Load(); f != nil {
				for _, b := range *f {
					b.timeOut(now)
				}
			}
		}
	}
}

// timeOut times out the server's connections at now (see
// serverConn.timeOut).
func (b *backend) timeOut(now time.Time) {
	for _, c := range b.conns {
		c.timeOut(now)
	}
}

// timeOut closes the connection's session if a request on it is past its
// deadline at now; the session's reader fails its requests with
// ErrTimeout.
//
// A reply that has reached the proxy's socket and is not read yet is the
// proxy's delay, not the server's: a proxy starved of CPU reads late, and
// would otherwise time out - and eject - servers that answered in time.
// Such bytes count as the server's progress.
func (c *serverConn) timeOut(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.s
	if s == nil || s.dead.Load() || !s.overdue(now, c.b.pool.cfg.Timeout) {
		return
	}
	if unread(s.conn) > 0 {
		s.readAt.Store(now.UnixNano())
		return
	}
	s.timedOut.Store(true)
	s.kill()
}

// stalled reports whether the server has moved nothing for a timeout at
// now for o, the first request not answered, past its deadline: nothing
// read since it was written whole, or, while it is being written, nothing
// written or read. The caller holds qmu.
func (s *session) stalled(o *op, now time.Time, timeout time.Duration) bool {
	if !now.After(o.deadline) {
		return false
	}
	last := s.readAt.Load()
	if o.sent == 0 {
		last = max(last, s.wroteAt.Load())
	} else {
		last = max(last, o.sent)
	}
	return now.UnixNano()-last > int64(timeout)
}

// writeStalled reports whether the write under way is past its deadline
// and the server has taken none of it for a timeout at now. The caller
// holds the serverConn's mu.
func (s *session) writeStalled(now time.Time, timeout time.Duration) bool {
	return !s.writeDeadline.IsZero() && now.After(s.writeDeadline) && now.UnixNano()-s.wroteAt.Load() > int64(timeout)
}
