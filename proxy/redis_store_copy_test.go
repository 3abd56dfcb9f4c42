package proxy

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// gateRelay is a TCP relay to a server that holds each of the proxy's
// writes carrying a gate's pattern until the test opens the gate, on
// whatever connection it comes: so a test chooses the order in which the
// server gets what the proxy sent on different connections.
type gateRelay struct {
	ln       net.Listener
	upstream string
	mu       sync.Mutex
	gates    []*relayGate
	conns    []net.Conn
	wg       sync.WaitGroup
}

// relayGate is a pattern of gateRelay's.
type relayGate struct {
	match []byte
	// seen is closed when a write carrying match arrives, passed when it
	// was passed on, and answered when the server then wrote back on its
	// connection (its reply, when nothing else was awaited there).
	seen, open, passed, answered chan struct{}
	once                         [4]sync.Once
}

func newGateRelay(t *testing.T, upstream string) *gateRelay {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &gateRelay{ln: ln, upstream: upstream}
	r.wg.Add(1)
	go r.accept()
	t.Cleanup(func() {
		r.mu.Lock()
		for _, g := range r.gates {
			g.pass()
		}
		for _, c := range r.conns {
			c.Close()
		}
		r.mu.Unlock()
		ln.Close()
		r.wg.Wait()
	})
	return r
}

func (r *gateRelay) addr() string { return r.ln.Addr().String() }

// hold adds a gate, shut, for the writes that carry match.
func (r *gateRelay) hold(match string) *relayGate {
	g := &relayGate{match: []byte(match), seen: make(chan struct{}), open: make(chan struct{}), passed: make(chan struct{}), answered: make(chan struct{})}
	r.mu.Lock()
	r.gates = append(r.gates, g)
	r.mu.Unlock()
	return g
}

// pass opens g: what it held goes on, and what comes after passes.
func (g *relayGate) pass() { g.once[0].Do(func() { close(g.open) }) }

func (r *gateRelay) accept() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", r.upstream)
		if err != nil {
			c.Close()
			continue
		}
		r.mu.Lock()
		r.conns = append(r.conns, c, s)
		r.mu.Unlock()
		var mu sync.Mutex // guards waiting: the gates passed on this connection, not yet answered
		var waiting []*relayGate
		r.wg.Add(2)
		go func() { // the proxy's requests
			defer r.wg.Done()
			defer s.Close()
			buf := make([]byte, 32<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					var mine []*relayGate
					r.mu.Lock()
					for _, g := range r.gates {
						if bytes.Contains(buf[:n], g.match) {
							mine = append(mine, g)
						}
					}
					r.mu.Unlock()
					for _, g := range mine {
						g.once[1].Do(func() { close(g.seen) })
						<-g.open
					}
					mu.Lock()
					waiting = append(waiting, mine...)
					mu.Unlock()
					if _, err := s.Write(buf[:n]); err != nil {
						return
					}
					for _, g := range mine {
						g.once[2].Do(func() { close(g.passed) })
					}
				}
				if err != nil {
					return
				}
			}
		}()
		go func() { // the server's replies
			defer r.wg.Done()
			defer c.Close()
			buf := make([]byte, 32<<10)
			for {
				n, err := s.Read(buf)
				if n > 0 {
					mu.Lock()
					for _, g := range waiting {
						g.once[3].Do(func() { close(g.answered) })
					}
					waiting = waiting[:0]
					mu.Unlock()
					if _, err := c.Write(buf[:n]); err != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

// waitFor waits for ch, what, failing the test past a bound.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("30 s without %s", what)
	}
}

// readsStopped returns a channel closed once the copy of key lets no read
// go to its old server.
func readsStopped(s *Server, key string) <-chan struct{} {
	k := s.testPool("p").mover.(*storeMover).copies
	k.mu.Lock()
	kc := k.byKey[key]
	k.mu.Unlock()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for kc != nil {
			kc.mu.RLock()
			on, changed := kc.fromSource, kc.changed
			kc.mu.RUnlock()
			if !on {
				return
			}
			<-changed
		}
	}()
	return stopped
}

// TestStoreBigKeyDeletedAfterItsReadsFromAnyProtocol: a RESP3 client's
// GET of a big key under copy goes to the key's old server on a RESP3
// connection, which the copy's UNLINK there does not share; the old
// server gets the GET only after the copy finished at the new server and
// stopped letting reads through. The GET still answers the value: the
// copy deletes the old server's key only once its reads there were
// answered. Before, the UNLINK went at once on its own connection and
// ran first, and the GET answered nil for a key whole on its new server.
// The relay holds the GET until the old server answered that UNLINK, or
// for 0.4 s after the copy stopped letting reads through if no UNLINK
// comes (the wait the fix makes: the read is answered whenever it goes
// within the wait's bound, half the copy's lease).
func TestStoreBigKeyDeletedAfterItsReadsFromAnyProtocol(t *testing.T) {
	t.Parallel()
	got, wrote, on, at := bigKeyReadHeld(t, 400*time.Millisecond)
	if got != bulk(strings.Repeat("v", 10_000)) {
		t.Errorf("GET from a RESP3 client while the key was copied: %.40q, want its value", got)
	}
	if wrote != "+OK\r\n" {
		t.Errorf("SET that waited for the copy: %q", wrote)
	}
	if on != ":0\r\n" || at != bulk("new") {
		t.Errorf("after the copy the key is on the old server %q, the new one holds %.40q", on, at)
	}
}

// TestStoreBigKeyCopyGivesUpOnAReadPastHalfItsLease: a read at the old
// server that is not answered within half the copy's lease (held 2.5 s
// by the relay) fails the copy instead of letting its delete wait past
// the lease, when another proxy could take the lock and copy a key this
// delete then empties: the key stays whole on its old server, the read
// answers its value, and the write that waited gets -TRYAGAIN, nothing
// written.
func TestStoreBigKeyCopyGivesUpOnAReadPastHalfItsLease(t *testing.T) {
	t.Parallel()
	value := bulk(strings.Repeat("v", 10_000))
	got, wrote, on, _ := bigKeyReadHeld(t, 2500*time.Millisecond)
	if got != value {
		t.Errorf("GET from a RESP3 client while the key was copied: %.40q, want its value", got)
	}
	if !strings.HasPrefix(wrote, "-TRYAGAIN") {
		t.Errorf("SET that waited for a copy given up: %q, want -TRYAGAIN", wrote)
	}
	if on != ":1\r\n" {
		t.Errorf("after the copy was given up the key is on the old server: %q, want :1", on)
	}
}

// bigKeyReadHeld starts a big key's copy from r0 (behind a relay) to r1
// with a write, sends a RESP3 client's GET of it to the old server, holds
// that GET at the relay until the copy stopped letting reads through and
// then until the old server answered the copy's UNLINK or for hold, and
// returns the GET's reply, the write's, EXISTS of the key at the old
// server and GET of it at the new one, after both replies.
func bigKeyReadHeld(t *testing.T, hold time.Duration) (got, wrote, on, at string) {
	r0, r1 := startRedis(t, 0), startRedis(t, 0)
	relay := newGateRelay(t, r0.addr)
	later := laterHours() // the mover waits: the test's requests move the key
	yaml := func(servers ...*redisServer) string {
		return redisPoolYAML("  distribution: ring\n  store: {enabled: true, hours: \""+later+"\", big_key_bytes: 1000}\n", servers...)
	}
	old := &redisServer{addr: relay.addr()}
	s := startProxy(t, yaml(old))
	reload(t, s, yaml(old, r1))
	key := ""
	for _, k := range testKeys("bigread", 100) {
		if ownerOf(s.testPool("p"), k) == r1.addr {
			key = k
			break
		}
	}
	value := strings.Repeat("v", 10_000) // big: over big_key_bytes
	if got := dialRedis(t, r0.addr).do("SET", key, value); got != "+OK\r\n" {
		t.Fatalf("SET %s at the old server: %q", key, got)
	}
	piece := relay.hold("$8\r\nGETRANGE\r\n") // the copy's first piece
	read := relay.hold("$3\r\nGET\r\n$" + strings.TrimPrefix(bulk(key), "$"))
	unlink := relay.hold("$6\r\nUNLINK\r\n$" + strings.TrimPrefix(bulk(key), "$"))
	unlink.pass()

	// A write starts the key's copy, and waits for it.
	wrote1 := make(chan string, 1)
	writer := dialRedis(t, s.Addr("p").String())
	go func() {
		writer.send("SET", key, "new")
		reply, err := writer.read()
		if err != nil {
			reply = err.Error()
		}
		wrote1 <- reply
	}()
	waitFor(t, piece.seen, "the copy's first piece read")
	stopped := readsStopped(s, key)
	c3 := dialRedis(t, s.Addr("p").String())
	if got := c3.do("HELLO", "3"); !strings.HasPrefix(got, "%") {
		t.Fatalf("HELLO 3: %q", got)
	}
	got1 := make(chan string, 1)
	go func() {
		c3.send("GET", key)
		reply, err := c3.read()
		if err != nil {
			reply = err.Error()
		}
		got1 <- reply
	}()
	waitFor(t, read.seen, "the RESP3 client's GET at the old server")
	piece.pass()
	waitFor(t, stopped, "the copy stopping reads at the old server")
	select {
	case <-unlink.answered:
	case <-time.After(hold):
	}
	read.pass()
	got, wrote = <-got1, <-wrote1
	return got, wrote, dialRedis(t, r0.addr).do("EXISTS", key), dialRedis(t, r1.addr).do("GET", key)
}

// TestKeyCopyAwaitsItsReads: a big key's delete waits for the reads sent
// to its old server (keyCopy.awaitReads): until the last ends, and, with
// one that does not end, until the delete's deadline, then fails with
// errReadsUnanswered so that the old server's copy stays.
func TestKeyCopyAwaitsItsReads(t *testing.T) {
	t.Parallel()
	t.Run("ended", func(t *testing.T) {
		kc := &keyCopy{reads: 2}
		waited := make(chan error, 1)
		go func() { waited <- kc.awaitReads(time.Now().Add(30 * time.Second)) }()
		kc.readEnded()
		kc.readEnded()
		if err := <-waited; err != nil {
			t.Errorf("awaitReads after both reads ended: %v", err)
		}
	})
	t.Run("unanswered", func(t *testing.T) {
		kc := &keyCopy{reads: 1}
		if err := kc.awaitReads(time.Now().Add(10 * time.Millisecond)); !errors.Is(err, errReadsUnanswered) {
			t.Errorf("awaitReads with a read unanswered past the deadline: %v, want errReadsUnanswered", err)
		}
		kc.readEnded() // late: nothing waits for it
		if err := kc.awaitReads(time.Now()); err != nil {
			t.Errorf("awaitReads with no read out: %v", err)
		}
	})
}
