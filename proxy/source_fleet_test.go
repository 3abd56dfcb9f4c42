package proxy

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// cutter forwards connections to a server until it is cut: then it closes
// every connection it forwards and every one it accepts, as a server that
// died would, while the server behind it keeps its data. mend forwards
// again.
type cutter struct {
	ln    net.Listener
	to    string
	mu    sync.Mutex // guards the fields below
	cut   bool
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// newCutter forwards a loopback port to the server at to; Cleanup stops
// it and waits for its goroutines.
func newCutter(t testing.TB, to string) *cutter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cutter{ln: ln, to: to, conns: map[net.Conn]bool{}}
	c.wg.Add(1)
	go c.accept()
	t.Cleanup(func() {
		ln.Close()
		c.setCut(true)
		c.wg.Wait()
	})
	return c
}

func (c *cutter) addr() string { return c.ln.Addr().String() }

func (c *cutter) accept() {
	defer c.wg.Done()
	for {
		in, err := c.ln.Accept()
		if err != nil {
			return
		}
		c.mu.Lock()
		var out net.Conn
		if !c.cut {
			out, err = net.Dial("tcp", c.to)
		}
		if c.cut || err != nil {
			c.mu.Unlock()
			in.Close()
			continue
		}
		c.conns[in], c.conns[out] = true, true
		c.wg.Add(2)
		go c.pipe(out, in)
		go c.pipe(in, out)
		c.mu.Unlock()
	}
}

// pipe copies src to dst until either ends, then closes both.
func (c *cutter) pipe(dst, src net.Conn) {
	defer c.wg.Done()
	_, _ = io.Copy(dst, src)
	c.mu.Lock()
	delete(c.conns, dst)
	delete(c.conns, src)
	c.mu.Unlock()
	dst.Close()
	src.Close()
}

// setCut cuts (closing every connection) or mends the forwarding.
func (c *cutter) setCut(cut bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = cut
	if cut {
		for conn := range c.conns {
			conn.Close()
		}
	}
}

// cutServers is a pool of memcached servers, each behind a cutter, named m0,
// m1, ... in the proxy's configuration.
type cutServers struct {
	t    *testing.T
	ms   []*memcached
	cuts []*cutter
	s    *Server
	addr string // the pool's listen address
}

// startFleet starts n memcached servers, a cutter for each, and a proxy
// whose pool "p" has the settings extra.
func startFleet(t *testing.T, n int, extra string) *cutServers {
	f := &cutServers{t: t}
	var b strings.Builder
	b.WriteString("p:\n  listen: 127.0.0.1:0\n  timeout: 10000\n")
	b.WriteString(extra)
	b.WriteString("  servers:\n")
	for i := range n {
		m := startMemcached(t, 0)
		c := newCutter(t, m.addr)
		f.ms, f.cuts = append(f.ms, m), append(f.cuts, c)
		fmt.Fprintf(&b, "   - %s:1 m%d\n", c.addr(), i)
	}
	f.s = startProxy(t, b.String())
	f.addr = f.s.Addr("p").String()
	return f
}

// backend returns the pool's server named m<i>.
func (f *cutServers) backend(i int) *backend {
	for _, b := range f.s.testPool("p").backends {
		if b.name() == fmt.Sprint("m", i) {
			return b
		}
	}
	f.t.Fatalf("no server m%d", i)
	return nil
}

// eject cuts server i and sends requests for key, one of its keys, until
// the proxy marks it down.
func (f *cutServers) eject(i int, key string) {
	f.cuts[i].setCut(true)
	c := dial(f.t, f.addr)
	b := f.backend(i)
	eventually(f.t, fmt.Sprintf("m%d marked down", i), func() bool {
		c.do("get " + key + "\r\n")
		return b.health.isDown()
	})
}

// restore mends server i and waits until the proxy's probe restores it.
func (f *cutServers) restore(i int) {
	f.cuts[i].setCut(false)
	b := f.backend(i)
	eventually(f.t, fmt.Sprintf("m%d restored", i), func() bool { return !b.health.isDown() })
}

// setAll stores value(key) for every key at addr, the proxy or a server,
// fifty sets sent at a time before their replies are read: each reply is
// still checked, in a fiftieth of the round trips.
func setAll(t *testing.T, addr string, keys []string, value func(string) string) {
	c := dial(t, addr)
	for lo := 0; lo < len(keys); lo += 50 {
		batch := keys[lo:min(lo+50, len(keys))]
		var b strings.Builder
		for _, k := range batch {
			v := value(k)
			fmt.Fprintf(&b, "set %s 0 0 %d\r\n%s\r\n", k, len(v), v)
		}
		c.send(b.String())
		for _, k := range batch {
			if got := c.reply(memcache.CmdSet); got != "STORED\r\n" {
				t.Fatalf("set %s at %s: %q", k, addr, got)
			}
		}
	}
}

// getAll reads keys at addr, the proxy or a server, fifty per get, and
// returns the values found.
func getAll(t *testing.T, addr string, keys []string) map[string]string {
	c := dial(t, addr)
	got := make(map[string]string, len(keys))
	for lo := 0; lo < len(keys); lo += 50 {
		reply := c.do("get " + strings.Join(keys[lo:min(lo+50, len(keys))], " ") + "\r\n")
		for strings.HasPrefix(reply, "VALUE ") {
			line, rest, _ := strings.Cut(reply, "\r\n")
			f := strings.Fields(line) // VALUE key flags bytes
			n, err := strconv.Atoi(f[len(f)-1])
			if err != nil || len(f) != 4 || len(rest) < n+2 {
				t.Fatalf("get at %s: bad reply %q", addr, reply)
			}
			got[f[1]], reply = rest[:n], rest[n+2:]
		}
		if reply != "END\r\n" {
			t.Fatalf("get at %s: %q left", addr, reply)
		}
	}
	return got
}

// owners returns, for each key, the index of the one server holding it
// with the value want(key), checked on the servers themselves; it fails
// the test for a key no server holds so.
func (f *cutServers) owners(keys []string, want func(string) string) []int {
	at := make([]int, len(keys))
	for i := range at {
		at[i] = -1
	}
	for si, m := range f.ms {
		vals := getAll(f.t, m.addr, keys)
		for i, k := range keys {
			if v, ok := vals[k]; ok && v == want(k) {
				if at[i] >= 0 {
					f.t.Fatalf("key %s has the value %q on m%d and m%d", k, v, at[i], si)
				}
				at[i] = si
			}
		}
	}
	for i, k := range keys {
		if at[i] < 0 {
			f.t.Fatalf("key %s: no server holds %q", k, want(k))
		}
	}
	return at
}

// testKeys returns n keys with the prefix.
func testKeys(prefix string, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s:%d", prefix, i)
	}
	return keys
}

// spreadKeys returns n keys that differ in more than a counter: under a
// weak key hash (nutcracker's fnv1a_64, 32 bits of it) a few hundred keys
// of one prefix and consecutive numbers land on a narrow arc of the ring.
func spreadKeys(prefix string, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s:%d:%x", prefix, i, uint32(i)*2654435761)
	}
	return keys
}
