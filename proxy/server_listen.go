package proxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"time"
)

// listening is the server's side that meets clients: each pool's
// listener, the sockets it opens or inherits, the clients the listeners
// accepted or another process handed over, and the drain that hands them
// on or closes them (Shutdown). The server installs and retires
// listeners on a reload, and reads what each pool serves through them.
type listening struct {
	// mu is Server.mu, which guards the fields below. It is the server's
	// lock, not one of this part's own: a reload installs and retires
	// listeners, a source reads what a pool serves and a shutdown begins
	// under the same lock that admits a client, so that no client is
	// admitted unseen by a retire or a drain running meanwhile.
	mu *sync.Mutex
	// byName are the pools' listeners, by pool name.
	byName  map[string]*listener
	clients map[net.Conn]*client
	lastID  uint64 // the last client's id
	closed  bool   // shutting down: draining the clients
	aborted bool   // past the shutdown's deadline: clients closed
	// handover, when set, takes the clients to a new process in a drain;
	// adopting is where clients come from a process this one took over
	// from (see Server.HandOver, Server.Adopt).
	handover *clientHandover
	adopting *net.UnixConn
	// sockets are the listening sockets the server opens or inherits.
	sockets sockets

	log    *slog.Logger
	budget *budget // kolco.buffer_limit, given to each client
	// wg is Server.wg: a shutdown waits for the accept loops and the
	// clients as for the server's other goroutines.
	wg *sync.WaitGroup
}

// newListening returns a listening side with nothing open, guarded by
// mu and counting its goroutines in wg.
func newListening(mu *sync.Mutex, wg *sync.WaitGroup, log *slog.Logger, b *budget) *listening {
	return &listening{mu: mu, wg: wg, log: log, budget: b, byName: map[string]*listener{}, clients: map[net.Conn]*client{}}
}

// listener accepts clients for one pool; the pool behind it changes on
// reload, and each request uses the pool current when it is read.
type listener struct {
	name string
	ln   net.Listener
	// key names the socket for a process it is handed to (listenKey).
	key string
	// side is the pool's TLS listener beside a plaintext ln (tls.listen),
	// named sideKey; nil without one.
	side    net.Listener
	sideKey string
	// pool is shared with the listener that replaces this one when the
	// pool moves to another address, so that clients accepted here follow
	// every later reload of the pool.
	pool *atomicPool
	// gate, when not nil, holds the sockets until the pool's source has
	// answered (see gatePlaced).
	gate *placeGate
}

// listen opens a listener for the pool p named name on addr.
func (ls *listening) listen(ctx context.Context, name, addr string, p *pool) (*listener, error) {
	spec, err := parseListen(addr)
	if err != nil {
		return nil, fmt.Errorf("pool %q: %w", name, err)
	}
	spec.backlog = p.cfg.Backlog
	ln, err := ls.sockets.open(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("pool %q: %w", name, err)
	}
	l := &listener{name: name, ln: ln, key: listenKey(spec.network, spec.addr), pool: new(atomicPool)}
	if t := p.cfg.TLS; t != nil && t.Listen != "" {
		sideSpec, err := parseListen(t.Listen)
		if err == nil {
			sideSpec.backlog = p.cfg.Backlog
			l.side, err = ls.sockets.open(ctx, sideSpec)
		}
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("pool %q: tls.listen: %w", name, err)
		}
		l.sideKey = listenKey(sideSpec.network, sideSpec.addr)
		ls.log.Info("listening with TLS", "pool", name, "addr", l.side.Addr().String())
	}
	l.pool.Store(p)
	if p.members != nil && p.members.placeholder {
		l.gatePlaced(ls.log)
	}
	ls.log.Info("listening", "pool", name, "addr", ln.Addr().String(), "servers", len(p.backends))
	for _, why := range p.cfg.ignoredSettings() {
		ls.log.Warn("setting ignored, as nutcracker ignores it", "pool", name, "setting", why)
	}
	return l, nil
}

func (ls *listening) acceptIn(l *listener) {
	ls.wg.Add(1)
	go func() {
		defer ls.wg.Done()
		ls.acceptLoop(l, l.ln, l.key, false)
	}()
	if l.side != nil {
		ls.wg.Add(1)
		go func() {
			defer ls.wg.Done()
			ls.acceptLoop(l, l.side, l.sideKey, true)
		}()
	}
}

// close closes the listener's sockets.
func (l *listener) close() {
	l.ln.Close()
	if l.side != nil {
		l.side.Close()
	}
}

// acceptLoop accepts the clients of ln, a socket of l named key; side
// says it is l's TLS socket beside a plaintext one.
func (ls *listening) acceptLoop(l *listener, ln net.Listener, key string, side bool) {
	backoff := time.Millisecond
	for {
		conn, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: wait, as net/http does.
			ls.log.Warn("accepting a client failed", "pool", l.name, "err", err)
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = time.Millisecond
		conn = clientConn(l.pool.Load(), conn, side)
		c := &client{conn: conn, pool: l.pool, budget: ls.budget, log: ls.log, listenKey: key}
		if !ls.track(c) {
			conn.Close()
			return
		}
		ls.serveClient(l, c)
	}
}

// serveClient serves c, accepted on l or handed over from another
// process, on a goroutine of its own, unless the pool is at
// max_client_connections: then c is refused.
func (ls *listening) serveClient(l *listener, c *client) {
	conn := c.conn
	p := l.pool.Load()
	st := p.stats
	if st.currConns.Load() >= int64(p.cfg.MaxClientConnections) {
		st.connRejected()
		if ok, held := p.refuseLog.allow(); ok {
			ls.log.Warn("client refused: over max_client_connections", "pool", l.name,
				"remote", conn.RemoteAddr(), "limit", p.cfg.MaxClientConnections, "refusals_not_logged", held)
		}
		_, _ = conn.Write(p.front.errorReply(ErrTooManyConns))
		ls.untrack(c)
		conn.Close()
		return
	}
	st.connOpened()
	ls.log.Debug("client accepted", "pool", l.name, "remote", conn.RemoteAddr())
	ls.wg.Add(1)
	go func() {
		defer ls.wg.Done()
		defer ls.untrack(c)
		defer st.connClosed()
		if !handshakeClient(p, c) {
			conn.Close()
			return
		}
		p.front.serve(c)
		ls.log.Debug("client closed", "pool", l.name, "remote", conn.RemoteAddr())
	}()
}

// track adds a client to the set, unless the server was
// aborted. A client accepted as the server began to shut down - the
// accept raced with the listener's close - is served and drained like
// the others: its connection was not refused, and its requests must be
// answered.
func (ls *listening) track(c *client) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.aborted {
		return false
	}
	ls.clients[c.conn] = c
	ls.lastID++
	c.id = ls.lastID
	c.peers = func() []*client {
		ls.mu.Lock()
		var out []*client
		for _, o := range ls.clients {
			if o.pool == c.pool {
				out = append(out, o)
			}
		}
		ls.mu.Unlock()
		slices.SortFunc(out, func(a, b *client) int { return cmp.Compare(a.id, b.id) })
		return out
	}
	if ls.closed {
		c.drains.handover.Store(ls.handover)
		c.drain()
	}
	return true
}

func (ls *listening) untrack(c *client) {
	ls.mu.Lock()
	delete(ls.clients, c.conn)
	ls.mu.Unlock()
}

// stopped reports whether the server shuts down.
func (ls *listening) stopped() bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.closed
}

// retire stops l, a removed pool's listener, and its clients, those
// accepted before the pool moved to its last address included: each
// ends its requests as if it had half-closed. The caller holds mu.
func (ls *listening) retire(l *listener) {
	l.close()
	for c, cl := range ls.clients {
		if cl.pool == l.pool {
			stopReading(c)
		}
	}
}

// drain stops accepting and drains every client, handing each to the
// new process when one takes them over (HandOver). The caller holds mu.
func (ls *listening) drain() {
	ls.closed = true
	for _, l := range ls.byName {
		l.close()
	}
	for _, c := range ls.clients {
		c.drains.handover.Store(ls.handover)
		c.drain()
	}
	if ls.adopting != nil {
		ls.adopting.Close() // no client comes from a process this one took over from
	}
	if ls.handover != nil {
		ls.log.Info("shutting down: listeners closed, handing each client to the new process once its requests in flight are answered", "clients", len(ls.clients))
	} else {
		ls.log.Info("shutting down: listeners closed, answering the requests in flight", "clients", len(ls.clients))
	}
}

// abort closes every client connection, and fails the requests still
// waiting for a server, which would otherwise hold their clients until
// the pool's timeout. For a shutdown past its deadline.
func (ls *listening) abort() {
	ls.mu.Lock()
	ls.aborted = true
	for c := range ls.clients {
		c.Close()
	}
	ls.mu.Unlock()
	for _, l := range ls.byName {
		l.pool.Load().abort()
	}
}

// stopReading ends the client's request stream as if it had half-closed:
// requests already read are still answered.
func stopReading(c net.Conn) {
	if tc, ok := c.(interface{ CloseRead() error }); ok && tc.CloseRead() == nil {
		return
	}
	_ = c.SetReadDeadline(time.Now())
}
