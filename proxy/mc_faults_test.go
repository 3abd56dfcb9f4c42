package proxy

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/proxy/memcache"
)

func (s *Server) testPool(name string) *pool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listening.byName[name].pool.Load()
}

func liveCount(s *Server) int { return len(s.testPool("p").place.Load().servers) }

// gathered returns the sum of the named counter's series whose labels
// include the value label.
func gathered(t *testing.T, s *Server, name, label string) float64 {
	t.Helper()
	fams, err := s.met.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == label {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

// TestRetryWithoutProbes checks twemproxy's retry: with probes off, an
// ejected server is tried again after server_retry_timeout whether or not
// it is up - under rehash by the flush_all that empties it before it
// serves again - and ejected again when that fails.
func TestRetryWithoutProbes(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
	s := startProxy(t, poolYAML(`  hash: md5
  auto_eject_hosts: true
  server_failure_limit: 1
  server_retry_timeout: 50
  health_check: {interval: -1}
`, ms...))
	pl := s.testPool("p")
	var victimKey string
	for i := 0; victimKey == ""; i++ {
		if k := fmt.Sprint("r", i); ownerOf(pl, k) == ms[1].addr {
			victimKey = k
		}
	}
	b := pl.backends[1]
	ms[1].stop()
	c := dial(t, s.Addr("p").String())
	if got := c.do("get " + victimKey + "\r\n"); !strings.HasPrefix(got, "SERVER_ERROR") {
		t.Fatalf("get on the dead server: %q", got)
	}
	eventually(t, "ejection", func() bool { return b.stats.ejections.Load() >= 1 })
	// Put back after the retry timeout, failed again by a request, ejected again.
	eventually(t, "a second ejection after the retry", func() bool {
		c.do("get " + victimKey + "\r\n")
		return b.stats.ejections.Load() >= 2
	})
}

// TestServerClosesIdleConnection: a server that closes a connection while
// no request is on it (memcached does after its idle_timeout, and when it
// restarts) fails no request and counts no failure: the proxy sees the
// close at once, and the next request reconnects.
func TestServerClosesIdleConnection(t *testing.T) {
	var accepted atomic.Int32
	addr := fakeServer(t, func(c net.Conn) {
		accepted.Add(1)
		r := bufio.NewReader(c)
		if _, err := r.ReadString('\n'); err != nil {
			return
		}
		c.Write([]byte("END\r\n"))
		c.Close() // idle now: closed
	})
	s := startProxy(t, "p:\n  listen: 127.0.0.1:0\n  timeout: 10000\n  auto_eject_hosts: true\n  server_failure_limit: 1\n  servers:\n   - "+addr+":1\n")
	b := s.testPool("p").backends[0]
	c := dial(t, s.Addr("p").String())
	for i := range 3 {
		if got := c.do("get k\r\n"); got != "END\r\n" {
			t.Fatalf("get %d: %q", i, got)
		}
		// The proxy sees the close before the next request is sent.
		eventually(t, "the close seen", func() bool {
			b.conns[0].mu.Lock()
			defer b.conns[0].mu.Unlock()
			return b.conns[0].s == nil || b.conns[0].s.dead.Load()
		})
	}
	if n := accepted.Load(); n != 3 {
		t.Errorf("%d connections for 3 requests, want 3", n)
	}
	if e := b.stats.errors.Load(); e != 0 {
		t.Errorf("%d errors counted for a server that answered every request", e)
	}
}

// TestRequestAfterReaderStopped: a request that finds the session's reader
// stopped (the server's close seen between the sender's check and its
// enqueue) was never written, so it goes on a new connection instead of
// failing.
func TestRequestAfterReaderStopped(t *testing.T) {
	var accepted atomic.Int32
	addr := fakeServer(t, func(c net.Conn) {
		accepted.Add(1)
		r := bufio.NewReader(c)
		for {
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
			c.Write([]byte("END\r\n"))
		}
	})
	s := startProxy(t, "p:\n  listen: 127.0.0.1:0\n  timeout: 10000\n  servers:\n   - "+addr+":1\n")
	bc := s.testPool("p").backends[0].conns[0]
	c := dial(t, s.Addr("p").String())
	if got := c.do("get k\r\n"); got != "END\r\n" {
		t.Fatalf("first get: %q", got)
	}
	bc.mu.Lock()
	old := bc.s
	bc.mu.Unlock()
	old.stop() // as the reader does when it sees the close; dead is not set yet
	if got := c.do("get k\r\n"); got != "END\r\n" {
		t.Fatalf("get after the reader stopped: %q", got)
	}
	bc.mu.Lock()
	replaced := bc.s != old
	bc.mu.Unlock()
	if !replaced || accepted.Load() != 2 {
		t.Errorf("session replaced %v, %d connections; want a second connection", replaced, accepted.Load())
	}
}

// TestNoEjectionServesAgainAtOnce: with auto_eject_hosts false, as in
// nutcracker, a server is never marked down: its keys fail while it is
// gone and work again the moment it is back.
func TestNoEjectionServesAgainAtOnce(t *testing.T) {
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
	s := startProxy(t, poolYAML("  hash: md5\n  auto_eject_hosts: false\n  server_failure_limit: 1\n", ms...))
	pl := s.testPool("p")
	var k string
	for i := 0; k == ""; i++ {
		if x := fmt.Sprint("k", i); ownerOf(pl, x) == ms[1].addr {
			k = x
		}
	}
	c := dial(t, s.Addr("p").String())
	ms[1].stop()
	for range 3 {
		if got := c.do("get " + k + "\r\n"); got != "SERVER_ERROR Connection refused\r\n" {
			t.Fatalf("get on the stopped server: %q", got)
		}
	}
	if pl.backends[1].health.isDown() {
		t.Fatal("marked down with auto_eject_hosts false")
	}
	startMemcached(t, ms[1].port)
	if got := c.do("get " + k + "\r\n"); got != "END\r\n" {
		t.Fatalf("first get after the server is back: %q", got)
	}
}

// TestServerValueOverLimit: a value that grew past max_value_size on the
// server (append) fails the requests that read it, and only those: the
// connection stays in step and the server is not counted as failing.
func TestServerValueOverLimit(t *testing.T) {
	m := startMemcached(t, 0)
	s := startProxy(t, poolYAML("  max_value_size: 1024\n  auto_eject_hosts: true\n  server_failure_limit: 1\n", m))
	c := dial(t, s.Addr("p").String())
	half := strings.Repeat("v", 900)
	for _, req := range []string{"set big 0 0 900\r\n" + half + "\r\n", "append big 0 0 900\r\n" + half + "\r\n", "set small 0 0 1\r\ns\r\n"} {
		if got := c.do(req); got != "STORED\r\n" {
			t.Fatalf("%.20q: %q", req, got)
		}
	}
	for range 3 {
		if got := c.do("get big\r\n"); !strings.HasPrefix(got, "SERVER_ERROR value too large") {
			t.Fatalf("get of an 1800-byte value: %q", got)
		}
		if got := c.do("get small\r\n"); got != "VALUE small 0 1\r\ns\r\nEND\r\n" {
			t.Fatalf("get small after it: %q", got)
		}
	}
	b := s.testPool("p").backends[0]
	if b.health.isDown() || b.stats.errors.Load() != 0 {
		t.Errorf("server down %v, %d errors counted", b.health.isDown(), b.stats.errors.Load())
	}
}

// TestUnreachableServerDoesNotQueueClients: requests for a server whose
// connects hang do not each wait out a connect in turn, holding up the
// clients' other requests: under rehash they fail at once once it is
// marked down; under none they share one connect.
func TestUnreachableServerDoesNotQueueClients(t *testing.T) {
	for _, tc := range []struct{ policy, extra, reply string }{
		{"rehash", "  auto_eject_hosts: true\n  server_failure_limit: 1\n  server_retry_timeout: 600000\n  health_check: {interval: 600000}\n", "SERVER_ERROR "},
		{"none", "", "SERVER_ERROR Connection timed out\r\n"},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			// Side by side: each waits out connects to its own black
			// hole, which costs the machine nothing, and times its own
			// clients; the test stays serial, so nothing else runs.
			t.Parallel()
			m := startMemcached(t, 0)
			hole := blackhole(t)
			// 300 ms stretched by how busy the machine is: at load 15-30
			// on two cores the live key's get timed out at 300 ms.
			timeout := time.Duration(300*realprog.Busy()) * time.Millisecond
			s := startProxy(t, fmt.Sprintf("p:\n  listen: 127.0.0.1:0\n  hash: md5\n  timeout: %d\n%s  servers:\n   - %s:1\n   - %s:1\n", timeout.Milliseconds(), tc.extra, m.addr, hole))
			pl := s.testPool("p")
			var live, dead string
			for i := 0; live == "" || dead == ""; i++ {
				k := fmt.Sprint("u", i)
				if ownerOf(pl, k) == m.addr {
					live = k
				} else {
					dead = k
				}
			}
			const clients = 20
			cs := make([]*mc, clients)
			for i := range cs {
				cs[i] = dial(t, s.Addr("p").String())
			}
			start := time.Now()
			for _, c := range cs {
				c.send("get " + dead + "\r\nget " + live + "\r\n")
			}
			want := tc.reply
			for _, c := range cs {
				if got := c.reply(memcache.CmdGet); !strings.HasPrefix(got, want) {
					t.Fatalf("unreachable server's key: %q, want %q...", got, want)
				}
				if got := c.reply(memcache.CmdGet); got != "END\r\n" {
					t.Fatalf("live key: %q", got)
				}
			}
			// A connect timeout (300 ms on a quiet machine), a few at
			// most; one per client in turn would be twenty (6 s).
			if d := time.Since(start); d > 10*timeout {
				t.Errorf("%d clients answered in %v: their requests waited for connects in turn", clients, d)
			}
		})
	}
}
