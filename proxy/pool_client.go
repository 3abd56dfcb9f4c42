package proxy

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// client is one client connection as the engine knows it, whatever its
// protocol: the connection, the listener's pool it follows through
// reloads, and its part in drains. Its front serves it (see front.serve).
type client struct {
	conn net.Conn
	// pool is the listener's: the pool a request read now goes to.
	pool   *atomicPool
	budget *budget // kolco.buffer_limit
	log    *slog.Logger
	drains drainState
	// listenKey names the listening socket the client came in on, for
	// the process it may be handed to (see clientHandover).
	listenKey string
	// unread is what the client sent that the process it was handed from
	// had not read as requests: read before the connection.
	unread []byte
	// connState is what the client's connection commands set, as its
	// front encodes it: set by the front of a drained client for the
	// process it is handed to, and there what the process it was handed
	// from set, for the front to read as it starts. The engine only
	// carries it; nil is a new connection's state.
	connState []byte
	// errorsInRow counts its protocol errors in a row (maxErrorsInRow).
	errorsInRow int // only its reader touches it
	clientSeen      // what other clients see of it
}

// maxErrorsInRow is how many protocol errors in a row - unknown commands,
// malformed lines - a client is answered, as memcached and redis-server
// answer each, before its connection is closed after the last answer, as
// nutcracker closes one at the first. No client that speaks the protocol
// sends that many; one sending garbage lines (50 MB of them were answered
// with 3.85 million ERRORs in 6 s, raising other clients' p99 from 3.5 ms
// to 131 ms) costs the proxy that many answers and no more, while a typo
// at a telnet prompt gets memcached's ERROR and the session goes on.
const maxErrorsInRow = 128

// acquire counts a request into the client's pool, p or the one that
// replaced it, following reloads; nil means the pool was removed.
func (c *client) acquire(p *pool) *pool {
	for !p.requests.acquire() {
		next := c.pool.Load()
		if next == p {
			return nil
		}
		p = next
	}
	return p
}

// streams returns what a front reads the client's requests from and
// writes its replies to: the connection, read and written by raw system
// calls where it can be (see rawIO), its bytes counted in p's figures.
// before, when not nil, runs before each read (see flushBatch).
func (c *client) streams(p *pool, before func()) (in, out *byteCount) {
	var rw io.ReadWriter = c.conn
	if r := newRawIO(c.conn); r != nil {
		rw = r // one goroutine may read while another writes
	}
	if len(c.unread) > 0 {
		rw = &unreadFirst{unread: c.unread, ReadWriter: rw}
		c.unread = nil
	}
	return &byteCount{rw: rw, total: &p.stats.bytesIn, before: before}, &byteCount{rw: rw, total: &p.stats.bytesOut}
}

// unreadFirst reads unread before its stream.
type unreadFirst struct {
	unread []byte
	io.ReadWriter
}

func (u *unreadFirst) Read(p []byte) (int, error) {
	if len(u.unread) > 0 {
		n := copy(p, u.unread)
		u.unread = u.unread[n:]
		return n, nil
	}
	return u.ReadWriter.Read(p)
}

// errDrained is the end of a client's requests that a drain made: it was
// idle, or at a request boundary when it is handed to another process.
var errDrained = errors.New("drained")

// ended closes the client's connection once its front is done with it,
// or hands it, with what it sent that was not read as requests (unread),
// to the process the server drains to (see clientHandover); and counts in p's
// figures how it ended: by the client (it closed or quit: readErr is nil
// or EOF), by a drain (errDrained), or by an error, a reply that could not
// be written (written false) among them.
func (c *client) ended(p *pool, in, out *byteCount, readErr error, written bool, unread []byte) {
	if h := c.drains.handover.Load(); h != nil && written && errors.Is(readErr, errDrained) && h.send(c, unread) {
		readErr = nil // not the client's ending
	}
	c.conn.Close()
	in.flush()
	out.flush()
	if errors.Is(readErr, errDrained) {
		readErr = nil
	}
	switch {
	case !written || readErr != nil && !errors.Is(readErr, io.EOF) && !errors.Is(readErr, net.ErrClosed):
		p.stats.clientErr.Add(1)
	case readErr == nil || errors.Is(readErr, io.EOF):
		p.stats.clientEOF.Add(1)
	}
}

// readFailed logs a read error that ended a client, unless the client
// just went away.
func (c *client) readFailed(err error) {
	if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		c.log.Debug("client read", "remote", c.conn.RemoteAddr(), "err", err)
	}
}

// request is a front's request, as the engine takes it in once read: its
// call, and how the front answers it.
type request interface {
	base() *call
	// answerError makes the request's reply the protocol's reply to err.
	answerError(err error)
	// requestError reports whether err, the read's error, is one in the
	// request itself, and if so makes the reply to it, the connection
	// closed after it when the stream cannot go on.
	requestError(err error) bool
	// ready marks the request, answered by the proxy, done.
	ready()
}

// intake takes in a request whose read returned err, reading it having
// reserved what the charge holds for it: the pool to dispatch it in, or
// nil when it is answered already (an error in the request, or a pool a
// reload removed, after which the connection is closed). ok is false when
// the read failed and the client is done; what the request reserved is
// released then.
func (c *client) intake(rq request, ch *charge, err error) (p *pool, ok bool) {
	cl := rq.base()
	cl.held = 0
	if ch.pending != 0 { // none for a request under chargeMin: it runs nothing of the charge
		cl.held = ch.take()
	}
	// The pool is loaded once the request is in, so that a request read
	// after a reload goes to the new pool.
	p = c.pool.Load()
	switch {
	case err == nil:
		c.errorsInRow = 0
		if p = c.acquire(p); p != nil {
			return p, true
		}
		cl.close = true
		rq.answerError(ErrPoolRemoved)
	case rq.requestError(err):
		p.stats.clientError()
		if c.errorsInRow++; c.errorsInRow >= maxErrorsInRow && !cl.close {
			cl.close = true
			if ok, held := p.garbageLog.allow(); ok {
				c.log.Warn("client closed: protocol errors in a row", "pool", p.name, "remote", c.conn.RemoteAddr(),
					"errors", c.errorsInRow, "closes_not_logged", held)
			}
		}
	default:
		ch.release(cl.held)
		cl.held = 0
		c.readFailed(err)
		return nil, false
	}
	rq.ready()
	return nil, true
}

// byteCount counts the bytes read or written through rw, adding them to
// total every 64 KiB and when flushed: a client's bytes reach the pool's
// figures without a shared counter touched per request.
type byteCount struct {
	rw    io.ReadWriter
	n     int
	total *atomic.Uint64
	// before, when set, is called before each read: the client's reader
	// writes its queued requests before it waits for more (flushBatch).
	before func()
}

func (b *byteCount) Read(p []byte) (int, error) {
	if b.before != nil {
		b.before()
	}
	n, err := b.rw.Read(p)
	b.count(n)
	return n, err
}

func (b *byteCount) Write(p []byte) (int, error) {
	n, err := b.rw.Write(p)
	b.count(n)
	return n, err
}

func (b *byteCount) count(n int) {
	if b.n += n; b.n >= 64<<10 {
		b.flush()
	}
}

func (b *byteCount) flush() {
	b.total.Add(uint64(b.n))
	b.n = 0
}

// call is a client's request on its way, the part every front's request
// has: the pool it went to, the ops sent for it, and the signal that all
// of them are done. A front's client writes the replies of its calls in
// the order it read them, whatever order the servers answer in. A call is
// reused once its reply is written.
type call struct {
	pool  *pool
	ops   []*op
	left  atomic.Int32
	done  chan struct{} // receives once when every op is done
	local []byte        // a reply made by the proxy itself
	close bool          // close the connection after this reply
	start time.Time
	// failed is set when the reply is the proxy's error for a server's
	// failure (nutcracker's forward_error).
	failed bool
	// moved is set when the call moved its keys first (a store's move):
	// its time is the move's own, which pacing the mover cannot shorten,
	// and the mover does not pace itself by it.
	moved bool
	// held is what reading the request reserved in the client's charge
	// (its ops hold what their replies did).
	held int64
	// guard is the outages of the pool whose returns the call holds for a
	// write, and guardKeys the keys it writes (see outage): released, the
	// keys noted, once every op is done.
	guard     *outages
	guardKeys [][]byte
	// guardLost is set when an op of the write failed (its server's
	// connection, a timeout): the write may not have reached the
	// stand-in its keys are noted with.
	guardLost atomic.Bool
}

func newCall() call { return call{done: make(chan struct{}, 1)} }

func (c *call) base() *call { return c }

// opDone counts an op done; the last one signals the call.
func (c *call) opDone(o *op) {
	if o != nil && c.guard != nil && o.lost() {
		c.guardLost.Store(true)
	}
	if c.left.Add(-1) == 0 {
		c.answered()
	}
}

// answered ends a call every op of which is done: its guarded write noted,
// counted out of its pool (see replacedAnswered), its reply let be written.
func (c *call) answered() {
	if c.guard != nil {
		c.unguard()
	}
	if p := c.pool; p != nil {
		p.requests.release()
	}
	c.done <- struct{}{}
}

// ready marks a call the proxy answered itself, with no op, as done.
func (c *call) ready() {
	c.left.Store(1)
	c.opDone(nil)
}

// nextOp returns the call's next op: the one of that place last time,
// reused, or a new one made by make. Ops are reused with their buffers, so
// that a request allocates nothing.
func (c *call) nextOp(make func() *op) *op {
	n := len(c.ops)
	if n < cap(c.ops) && c.ops[:n+1][n] != nil {
		c.ops = c.ops[:n+1]
	} else {
		c.ops = append(c.ops, make())
	}
	return c.ops[n]
}

// heldBytes returns what the call and its ops hold in the client's charge.
func (c *call) heldBytes() int64 {
	n := c.held
	for _, o := range c.ops {
		n += o.held
	}
	return n
}

// finish records the call in its pool's figures as command cmd of its
// front (see front.commands) once its reply is written, and returns what
// it held in the client's charge.
func (c *call) finish(ch *charge, cmd int) {
	if p := c.pool; p != nil {
		d := time.Since(c.start)
		p.stats.request(cmd, d)
		if !c.moved {
			p.stats.latency.Observe(d)
		}
		if c.failed {
			p.stats.forwardErrors.Add(1)
		}
	}
	if n := c.heldBytes(); n != 0 {
		ch.release(n)
	}
}

// reset makes the call ready for the next request, keeping its buffers
// but those a large reply grew; its ops are the front's to reset.
func (c *call) reset() {
	c.ops, c.local, c.pool, c.close, c.failed, c.held, c.moved = c.ops[:0], trim(c.local), nil, false, false, 0, false
}

// trim returns b emptied, or nil when it grew past what is worth keeping.
func trim(b []byte) []byte {
	if cap(b) > byRef {
		return nil
	}
	return b[:0]
}

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
	// handover, when set, takes the client's connection to another
	// process instead of it being closed.
	handover atomic.Pointer[clientHandover]
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
	if idle := c.pool.Load().cfg.ClientIdleTimeout; idle > 0 {
		// Renewed before every request, so that a client that keeps
		// sending is never cut, and one that stalls mid-request is. Set
		// before inRequest is cleared, so that a drain's deadline, set
		// after it, wins.
		_ = c.conn.SetReadDeadline(time.Now().Add(idle))
	}
	for {
		d.inRequest.Store(false)
		// Handed to another process, a client goes at any boundary,
		// with what it sent since; closed, at one with nothing sent.
		handing := d.handover.Load() != nil
		if d.draining.Load() && (d.served || handing) && (r.Buffered() == 0 || handing) {
			return false
		}
		err := r.Wait()
		if err != nil {
			if !d.draining.Load() || !isTimeout(err) {
				return true
			}
			if d.served || d.graced || d.handover.Load() != nil {
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

// requestReader is a client's reader of requests, in its front's protocol.
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
	if idle := c.pool.Load().cfg.ClientIdleTimeout; idle > 0 {
		return time.Now().Add(idle)
	}
	return time.Time{}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// acquire counts a request in; it fails once the pool is closing, and the
// caller then loads the listener's (new) pool again.
func (f *inFlight) acquire() bool {
	if f.refs.Add(1)&closingBit != 0 {
		f.release()
		return false
	}
	return true
}

// release counts a request out.
func (f *inFlight) release() {
	if f.refs.Add(-1) == closingBit {
		f.drainOnce.Do(func() { close(f.drained) })
	}
}

// cmdStats are the figures of one command of a pool.
type cmdStats struct {
	count    atomic.Uint64
	requests prometheus.Counter
	latency  prometheus.Observer
}

// request counts a request of command cmd answered, and the time it took.
func (s *poolStats) request(cmd int, d time.Duration) {
	p := &s.cmds[cmd]
	cs := p.Load()
	if cs == nil {
		name := s.front.commandName(cmd)
		cs = &cmdStats{requests: s.m.requests.WithLabelValues(s.pool, name), latency: s.m.latency.WithLabelValues(s.pool, name)}
		if !p.CompareAndSwap(nil, cs) {
			cs = p.Load()
		}
	}
	cs.count.Add(1)
	cs.requests.Inc()
	cs.latency.Observe(d.Seconds())
}

// commandCount returns how many requests of command cmd were answered.
func (s *poolStats) commandCount(cmd int) uint64 {
	if cs := s.cmds[cmd].Load(); cs != nil {
		return cs.count.Load()
	}
	return 0
}
