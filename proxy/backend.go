package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kolco-dev/kolco"
)

// backend is one server of a pool: its connections, its health and its
// figures. Requests reach it through send and report how they ended
// through served and fail, so that the server keeps its own standing
// whoever sends to it.
type backend struct {
	pool *pool
	// node is the server as the pool's placement knows it: its ID (the
	// name twemproxy hashes it under: the name given, else its address),
	// weight, zone and address.
	node  kolco.Node
	addr  string // node.Addr
	index int    // in the pool's backends
	// conns are the server's connections, server_connections of each
	// dialect the front speaks in turn (see op.dialect).
	conns  []*serverConn
	next   atomic.Uint32
	health health
	stats  *serverStats
	// failLog limits the lines logged for the server's failures.
	failLog logLimit
	// outage is the journal of what the server misses while it is
	// marked down, when its keys are written elsewhere (see outage).
	outage atomic.Pointer[outage]
	// missed are the changes a server down in a pool that keeps no
	// outage journal missed the presweep of (see outages.downAcross).
	missed atomic.Pointer[changeLog]

	// downErr is the error of every request refused while the server is
	// down: one value, so that refusing allocates nothing.
	downErr error

	// slot is the backend's index among the pool's servers, its former
	// ones after them (see migration.tainted).
	slot int
	// former marks a server the pool no longer has, kept for the reads
	// and deletes of a migration window: its failures mark nothing down.
	former bool
	// checkNow marks a server that starts down to be checked as its pool
	// starts, not a health check interval later (see
	// pool.inheritRepointed).
	checkNow bool
	// replicaOf is, for a replica a pool reads (see ReplicaReads), its
	// shard's primary: where a read the replica fails goes, and why its
	// failures mark nothing down (the tracker decides whether it is
	// read); nil for the pool's own servers.
	replicaOf *backend
}

func newBackend(p *pool, n kolco.Node) *backend {
	b := &backend{pool: p, node: n, addr: n.Addr, index: len(p.backends)}
	b.downErr = &ServerError{Addr: b.addr, Err: ErrServerDown}
	b.stats = newServerStats(p.met, p.name, b)
	for d := range p.front.dialects() {
		for range p.cfg.ServerConnections {
			b.conns = append(b.conns, &serverConn{b: b, dialect: uint8(d)})
		}
	}
	return b
}

// connsOf returns the server's connections of dialect d: each dialect
// has server_connections of them (see newBackend), read from the
// configuration rather than asked of the front on every send.
func (b *backend) connsOf(d uint8) []*serverConn {
	n := b.pool.cfg.ServerConnections
	return b.conns[int(d)*n : (int(d)+1)*n]
}

// name is the server's name: its node's ID.
func (b *backend) name() string { return b.node.ID }

// send sends o on one of the server's connections, or fails it at once,
// without trying the server, while the server is down.
func (b *backend) send(o *op) {
	if b.health.isDown() {
		b.stats.failed(1)
		o.finish(b.downErr)
		return
	}
	conns := b.connsOf(o.dialect)
	conns[int(b.next.Add(1))%len(conns)].send(b.pool.ctx, o)
}

// sendKeyed sends o on the connection of the key whose hash is h, so that
// ops of one key reach the server in the order they are sent.
func (b *backend) sendKeyed(o *op, h uint64) {
	if b.health.isDown() {
		b.stats.failed(1)
		o.finish(b.downErr)
		return
	}
	conns := b.connsOf(o.dialect)
	conns[h%uint64(len(conns))].send(b.pool.ctx, o)
}

// keyHash returns FNV-1a of key: it picks a key's stripe and the
// connection its reads and deletes at a previous server take.
func keyHash(key []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range key {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// op is one request to one server and, once done, its reply: what the
// engine sends and the server's reader answers, in every protocol.
type op struct {
	buf []byte // the encoded request, or its head when data is set
	// data is a large data block passed by reference: it is written
	// after buf and followed by "\r\n", as both protocols end a value,
	// and by tail, the rest of the request (a Redis request's arguments
	// after the value).
	data     []byte
	tail     []byte
	deadline time.Time
	reply    []byte
	err      error
	done     func(*op) // called once, from a server's goroutine
	// batch, when set, is the client's reader's (see flushBatch).
	batch *flushBatch
	// charge is the client's; held is what the reply's values reserved
	// in it, small the bytes of small values not yet charged.
	charge *charge
	held   int64
	small  int
	// front is the front's own op that holds this one (mcOp, redisOp):
	// what its reply reader needs to read the reply, and what it finds.
	front any
	// unsaid is set when the client asked for no reply (memcached's
	// noreply): the proxy sends the request without it, and reads the
	// reply only to learn the outcome; the stats port counts the request
	// and no reply, as nutcracker forwards it (see serverStats.unsaid).
	unsaid bool
	// fallback is, for a read sent to a replica, the shard's primary: a
	// read the replica fails (it died, its connection was let go, it is
	// loading) is sent there, within the same deadline, so that no read
	// fails while the primary serves. Set for each send.
	fallback *backend
	// sent is when the request was written whole, in unix nanoseconds; 0
	// before. Guarded by the serverConn's mu.
	sent int64
	// dialect is the kind of connection o goes on: 0, the front's own,
	// or one of the others a front keeps, whose handshake differs (a
	// Redis pool's connections that speak RESP3, for the clients that
	// asked for it). Set for each send.
	dialect uint8
}

// finish ends o with err, nil when the server answered; a read a replica
// failed goes to its primary instead.
func (o *op) finish(err error) {
	if err != nil && o.fallback != nil && !errors.Is(err, ErrPoolClosed) {
		fb := o.fallback
		o.fallback = nil
		o.batch = nil // its round may be written already: written at once
		fb.send(o)
		return
	}
	o.err = err
	o.done(o)
}

// size returns the bytes of the encoded request.
func (o *op) size() int {
	if o.data != nil {
		return len(o.buf) + len(o.data) + 2 + len(o.tail)
	}
	return len(o.buf)
}

// preconnect opens every connection of the front's own dialect now rather
// than on first use; the others connect when a client first asks for one.
func (b *backend) preconnect(ctx context.Context) {
	for _, c := range b.connsOf(0) {
		c.mu.Lock()
		if !c.closed {
			_, _ = c.session(ctx, false)
		}
		c.mu.Unlock()
	}
}

// close ends every connection; requests still in flight fail.
func (b *backend) close() {
	for _, c := range b.conns {
		c.mu.Lock()
		c.closed = true
		if c.s != nil {
			c.s.end()
			c.s = nil
		}
		c.mu.Unlock()
	}
}

// answered records how the server answered a request, err being nil or
// an error for which its replies' inStep is true, and returns the
// request's error. A reply over the limits fails its request, and the
// server is fine. A server that is loading its data is not: its reply
// stands, and counts as its failure, so that it is treated as down until
// it is ready.
func (b *backend) answered(err error) error {
	switch {
	case err == nil:
		b.served()
		return nil
	case errors.Is(err, ErrServerLoading):
		b.fail(serverError(b.addr, "", err), 1)
		if b.replicaOf != nil {
			// A replica loading what its primary sent it: the read goes
			// to the primary (see op.fallback).
			return serverError(b.addr, "", err)
		}
		return nil
	}
	b.served()
	return serverError(b.addr, "", err)
}

// health is a server's standing: marked down or not, its consecutive
// failures, and when a down server may be tried again.
type health struct {
	// down is set while the server is ejected or marked down; requests
	// read it without a lock.
	down atomic.Bool
	// mu guards failures and retryAt, and seen.
	mu       sync.Mutex
	failures int
	retryAt  time.Time
	// seen is what the proxy observed of the server under every ejection
	// policy (failures counts only towards ejection), for the status page:
	// a server failing every request under ejection none is never marked
	// down, and must not look healthy.
	seen observed
}

// observed is a server's health as the proxy saw it: its failures in a
// row since the last reply (failing) and since when, and its last error.
type observed struct {
	failing      int
	failingSince time.Time
	lastErr      string
	lastErrAt    time.Time
}

// failedWith notes a request failed with err at now.
func (h *health) failedWith(err error, now time.Time) {
	h.mu.Lock()
	if h.seen.failing == 0 {
		h.seen.failingSince = now
	}
	h.seen.failing++
	h.seen.lastErr, h.seen.lastErrAt = err.Error(), now
	h.mu.Unlock()
}

// observedNow returns what the proxy observed of the server.
func (h *health) observedNow() observed {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen
}

func (h *health) isDown() bool { return h.down.Load() }

// succeeded ends a run of failures.
func (h *health) succeeded() {
	h.mu.Lock()
	h.failures = 0
	h.seen.failing = 0
	h.mu.Unlock()
}

// failed counts a failure and reports whether it marks the server down:
// the limit-th consecutive failure of a server that is not down yet does,
// and the server may be tried again after retry. opening runs before the
// server is marked down, so that nothing routed around it misses what it
// sets up (its outage journal).
func (h *health) failed(limit int, retry time.Duration, opening func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failures++
	if h.down.Load() || h.failures < limit {
		return false
	}
	opening()
	h.down.Store(true)
	h.retryAt = time.Now().Add(retry)
	return true
}

// restore marks the server up and reports whether it was down. Its run
// of failures ends: it answered a probe, or its retry time came.
func (h *health) restore() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failures = 0
	h.seen.failing = 0
	return h.down.Swap(false)
}

// markDown marks the server down, to be tried again at once: a server
// that starts with what another missed to settle (see
// pool.inheritRepointed).
func (h *health) markDown() {
	h.mu.Lock()
	h.failures, h.retryAt = 0, time.Now()
	h.down.Store(true)
	h.mu.Unlock()
}

// retryAfter sets the next try of a down server to d from now.
func (h *health) retryAfter(d time.Duration) {
	h.mu.Lock()
	h.retryAt = time.Now().Add(d)
	h.mu.Unlock()
}

// retryTime returns when a down server may be tried again.
func (h *health) retryTime() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.retryAt
}

// inherit makes h down, with old's failures and retry time, when old is
// down, and reports whether it was.
func (h *health) inherit(old *health) bool {
	if !old.isDown() {
		return false
	}
	old.mu.Lock()
	failures, retryAt := old.failures, old.retryAt
	old.mu.Unlock()
	h.mu.Lock()
	h.failures, h.retryAt = failures, retryAt
	h.down.Store(true)
	h.mu.Unlock()
	return true
}

// served records a reply from the server: its failures start again.
func (b *backend) served() { b.health.succeeded() }

// fail records that n requests failed at the server with err. Each is an
// error in the server's figures; together they are one failure towards
// ejection, as in twemproxy, where a connection that fails with several
// requests on it counts once. A request refused because the server is down
// or the pool is closing did not try the server and is no failure; under
// ejection none no server is ever marked down.
func (b *backend) fail(err error, n int) {
	b.stats.failed(n)
	if b.former || b.replicaOf != nil {
		// Not the pool's: a migration stops reading it, or the replica
		// tracker, instead.
		return
	}
	cfg := b.pool.cfg
	if errors.Is(err, ErrPoolClosed) || errors.Is(err, ErrServerDown) {
		return
	}
	b.health.failedWith(err, time.Now())
	b.logFailure(err, n)
	b.pool.askSource()
	if cfg.Ejection == EjectNone {
		return
	}
	b.failedTowards(cfg.ServerFailureLimit, err)
}

// failedTowards counts a failure with err towards ejection and marks the
// server down when it is the limit-th in a row.
func (b *backend) failedTowards(limit int, err error) {
	if b.health.failed(limit, b.pool.cfg.ServerRetryTimeout, func() { b.pool.outages.begin(b) }) {
		b.stats.ejected()
		b.pool.checks.changed(b, false, err)
		if o := b.outage.Load(); o != nil {
			o.markedDown(time.Now()) // placed around it from here on (rebuilt, for twemproxy's)
		}
		if next := b.pool.successor.Load(); next != nil {
			next.downWith(b, true) // a request in flight in a replaced pool
		}
	}
}

// logFailure logs a failure of the server, under every ejection policy,
// at most once per logEvery: the line says how many failures it stands for.
func (b *backend) logFailure(err error, n int) {
	ok, held := b.failLog.allow()
	if !ok {
		return
	}
	b.pool.log.Warn("server failed", "server", b.name(), "addr", b.addr, "policy", b.pool.cfg.Ejection,
		"requests", n, "failures_not_logged", held, "err", err)
}

// restore marks the server up again.
func (b *backend) restore() {
	if b.health.restore() {
		b.stats.restores.Add(1)
		b.pool.checks.changed(b, true, nil)
	}
}

// serverStats are one server's figures, for the stats command, the stats
// port and the metrics. They survive a reload that keeps the server (same
// name, same address). Each is written where it is cheapest: requests and
// their bytes once per write to the server, replies by the connection's
// reader, which alone writes those; the hot path touches no label and
// allocates nothing.
type serverStats struct {
	requests, requestBytes   atomic.Uint64 // sent
	responses, responseBytes atomic.Uint64 // received
	hits, misses             atomic.Uint64 // keys of get, gets, gat, gats, mg
	// unsaid and unsaidBytes count the replies of the above to requests
	// with noreply: read for the proxy, never written to a client.
	unsaid, unsaidBytes atomic.Uint64
	errors              atomic.Uint64 // requests failed at the server
	ejections, restores atomic.Uint64
	settled             atomic.Uint64 // keys settled on the server's returns
	ejectedAt           atomic.Int64  // unix microseconds of the last ejection
	// Connections ended by the server (eof), by an error, or by a
	// timeout; opened now, and ever dialled.
	eof, err, timedout atomic.Uint64
	conns              atomic.Int64
	dials              atomic.Uint64
	// latency observes the time from a request's dispatch to the server's
	// reply; latencyNanos sums it, for the mean the status page shows.
	latency      prometheus.Observer
	latencyNanos atomic.Int64
}

func newServerStats(m *metrics, pool string, b *backend) *serverStats {
	return &serverStats{latency: m.serverLatency.WithLabelValues(pool, b.name(), b.addr)}
}

// failed counts n failed requests.
func (s *serverStats) failed(n int) { s.errors.Add(uint64(n)) }

// ejected counts the server marked down.
func (s *serverStats) ejected() {
	s.ejections.Add(1)
	s.ejectedAt.Store(time.Now().UnixMicro())
}

// sent counts n requests of size bytes written to the server.
func (s *serverStats) sent(n, size int) {
	s.requests.Add(uint64(n))
	s.requestBytes.Add(uint64(size))
}

// answered counts the reply to o, read by the connection's reader, which
// began to arrive at now. The front's reader counts hits and misses.
func (s *serverStats) answered(o *op, now time.Time, timeout time.Duration) {
	s.responses.Add(1)
	s.responseBytes.Add(uint64(len(o.reply)))
	if o.unsaid {
		s.unsaid.Add(1)
		s.unsaidBytes.Add(uint64(len(o.reply)))
	}
	d := now.Sub(o.deadline.Add(-timeout))
	s.latency.Observe(d.Seconds())
	s.latencyNanos.Add(int64(d))
}

// closed counts a connection the server ended or failed: cleanly (EOF),
// by timing out, or by any other error, as nutcracker's server_eof,
// server_timedout and server_err count them.
func (s *serverStats) closed(err error) {
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		s.eof.Add(1)
	case errors.Is(err, ErrTimeout), errors.As(err, &ne) && ne.Timeout():
		s.timedout.Add(1)
	default:
		s.err.Add(1)
	}
}
