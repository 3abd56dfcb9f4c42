package faults

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// Relay is a TCP relay on 127.0.0.1 between the proxies and one server:
// the link a fault makes slow, stalls or cuts.
//
// Shopify's toxiproxy, used as a library, was the alternative. Its
// "timeout" toxic, the one that stalls a link, drops the bytes sent
// meanwhile and keeps the connection open, which no TCP link does: the
// requests and replies after the gap would be paired with the wrong ones,
// and a checker would blame the proxy for the relay's reordering. Here a
// stalled link holds the bytes and delivers them in order when released,
// as a congested network does, and a cut link resets its connections, as
// a dead one does; a slow one delays each chunk. Its server API, metrics
// and logger (zerolog, gorilla/mux, urfave/cli in go.mod) would come along
// unused.
type Relay struct {
	// Addr is where the relay listens: the address a proxy is given for
	// the server.
	Addr     string
	upstream string
	ln       net.Listener
	wg       sync.WaitGroup

	mu      sync.Mutex // guards what follows
	delay   time.Duration
	stalled chan struct{} // closed on release; nil while not stalled
	// held is stalled for the server's replies alone (HoldReplies).
	held   chan struct{}
	cut    bool
	links  map[*link]struct{}
	closed bool
}

// link is one client connection and its connection to the server.
type link struct {
	client, server net.Conn
	done           chan struct{}
	once           sync.Once
}

// reset closes both connections with a reset, as a dead link would.
func (l *link) reset() {
	l.once.Do(func() {
		for _, c := range []net.Conn{l.client, l.server} {
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
			_ = c.Close()
		}
		close(l.done)
	})
}

// NewRelay starts a relay to upstream on a free port of 127.0.0.1.
func NewRelay(upstream string) (*Relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Relay{Addr: ln.Addr().String(), upstream: upstream, ln: ln, links: map[*link]struct{}{}}
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

func (r *Relay) accept() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.wg.Add(1)
		go r.serve(c)
	}
}

func (r *Relay) serve(c net.Conn) {
	defer r.wg.Done()
	r.mu.Lock()
	cut := r.cut || r.closed
	r.mu.Unlock()
	if cut {
		(&link{client: c, server: nopConn{}, done: make(chan struct{})}).reset()
		return
	}
	s, err := net.DialTimeout("tcp", r.upstream, 2*time.Second)
	if err != nil {
		(&link{client: c, server: nopConn{}, done: make(chan struct{})}).reset()
		return
	}
	l := &link{client: c, server: s, done: make(chan struct{})}
	r.mu.Lock()
	if r.cut || r.closed {
		r.mu.Unlock()
		l.reset()
		return
	}
	r.links[l] = struct{}{}
	r.mu.Unlock()
	var pumps sync.WaitGroup
	pumps.Add(2)
	go func() { defer pumps.Done(); r.pump(l, s, c, false) }()
	go func() { defer pumps.Done(); r.pump(l, c, s, true) }()
	pumps.Wait()
	l.reset()
	r.mu.Lock()
	delete(r.links, l)
	r.mu.Unlock()
}

// pump copies src to dst, chunk by chunk, as the link's state allows;
// replies says that src is the server. At src's end it passes the end on
// (a half close), so that a server closing a connection is seen as a
// close.
func (r *Relay) pump(l *link, dst, src net.Conn, replies bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !r.pass(l, replies) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				l.reset()
				return
			}
		}
		if err != nil {
			if tc, ok := dst.(*net.TCPConn); ok && errors.Is(err, io.EOF) {
				_ = tc.CloseWrite()
				return
			}
			l.reset()
			return
		}
	}
}

// pass waits until a chunk may go on (a reply when replies is set): out
// of a stall, after the delay. It returns false when the link was cut
// meanwhile.
func (r *Relay) pass(l *link, replies bool) bool {
	r.mu.Lock()
	stalls, delay := []chan struct{}{r.stalled}, r.delay
	if replies {
		stalls = append(stalls, r.held)
	}
	r.mu.Unlock()
	for _, stalled := range stalls {
		if stalled == nil {
			continue
		}
		select {
		case <-stalled:
		case <-l.done:
			return false
		}
	}
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-l.done:
			return false
		}
	}
	select {
	case <-l.done:
		return false
	default:
		return true
	}
}

// Slow delays every chunk, each way, by d (0: no delay).
func (r *Relay) Slow(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.delay = d
}

// Stall holds every byte, each way, until Heal: the connections stay
// open, and nothing reaches the other end.
func (r *Relay) Stall() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stalled == nil {
		r.stalled = make(chan struct{})
	}
}

// HoldReplies holds every byte the server sends until Heal, and lets
// the requests through: the server runs them, and no client hears of it
// meanwhile, as when the way back of a link is congested.
func (r *Relay) HoldReplies() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held == nil {
		r.held = make(chan struct{})
	}
}

// Cut resets every connection and each new one until Heal.
func (r *Relay) Cut() {
	r.mu.Lock()
	r.cut = true
	links := make([]*link, 0, len(r.links))
	for l := range r.links {
		links = append(links, l)
	}
	r.mu.Unlock()
	for _, l := range links {
		l.reset()
	}
}

// Heal ends every fault: the held bytes go on, in order.
func (r *Relay) Heal() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.delay, r.cut = 0, false
	for _, c := range []*chan struct{}{&r.stalled, &r.held} {
		if *c != nil {
			close(*c)
			*c = nil
		}
	}
}

// Close stops the relay and resets its connections.
func (r *Relay) Close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	_ = r.ln.Close()
	r.Cut()
	r.Heal()
	r.wg.Wait()
}

// nopConn stands for a server connection never made.
type nopConn struct{ net.Conn }

func (nopConn) Close() error { return nil }
