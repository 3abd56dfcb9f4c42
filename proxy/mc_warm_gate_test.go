package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// gate is a relay in front of a server that holds the server's replies
// while it is shut, and reports each command line it passes on, so that a
// test can put a request at a chosen point between others.
type gate struct {
	addr string
	mu   sync.Mutex
	cond *sync.Cond
	shut bool
	seen chan string // command lines passed on to the server
}

// startGate relays 127.0.0.1:<port> to the server at upstream until the
// test ends.
func startGate(t *testing.T, upstream string) *gate {
	g := &gate{seen: make(chan string, 1024)}
	g.cond = sync.NewCond(&g.mu)
	g.addr = fakeServer(t, func(c net.Conn) {
		up, err := net.Dial("tcp", upstream)
		if err != nil {
			c.Close()
			return
		}
		t.Cleanup(func() { up.Close() })
		go g.down(up, c)
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('\n')
			if len(line) > 0 {
				if _, werr := io.WriteString(up, line); werr != nil {
					return
				}
				if f := strings.Fields(line); len(f) > 1 && (f[0] == "mg" || f[0] == "md" || f[0] == "ms") {
					select {
					case g.seen <- f[0] + " " + f[1]:
					default:
					}
				}
			}
			if err != nil {
				up.Close()
				return
			}
		}
	})
	return g
}

// down copies the server's replies to the client, waiting while shut.
func (g *gate) down(up, c net.Conn) {
	buf := make([]byte, 64<<10)
	for {
		n, err := up.Read(buf)
		g.mu.Lock()
		for g.shut {
			g.cond.Wait()
		}
		g.mu.Unlock()
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			c.Close()
			return
		}
	}
}

// hold shuts the gate (true) or opens it.
func (g *gate) hold(shut bool) {
	g.mu.Lock()
	g.shut = shut
	g.mu.Unlock()
	g.cond.Broadcast()
}

// await waits until the gate has passed on the command line want ("mg
// key"), dropping the others.
func (g *gate) await(t *testing.T, want string) {
	t.Helper()
	for line := range g.seen {
		if line == want {
			return
		}
	}
}

// orderModel is memcached's outcome of a client's requests applied one
// after another, with flags 0 throughout.
type orderModel map[string]*string

// apply applies one request of the script to m and returns its command,
// its text and the reply memcached gives when requests are applied in
// order.
func (m orderModel) apply(step, k string) (memcache.Command, string, string) {
	v := m[k]
	value := func(s string) string { return fmt.Sprintf("VALUE %s 0 %d\r\n%s\r\nEND\r\n", k, len(s), s) }
	switch step {
	case "get":
		if v == nil {
			return memcache.CmdGet, "get " + k + "\r\n", "END\r\n"
		}
		return memcache.CmdGet, "get " + k + "\r\n", value(*v)
	case "incr":
		if v == nil {
			return memcache.CmdIncr, "incr " + k + " 5\r\n", "NOT_FOUND\r\n"
		}
		n, err := strconv.Atoi(*v)
		if err != nil {
			return memcache.CmdIncr, "incr " + k + " 5\r\n", "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"
		}
		s := strconv.Itoa(n + 5)
		m[k] = &s
		return memcache.CmdIncr, "incr " + k + " 5\r\n", s + "\r\n"
	case "append", "prepend":
		tail := step[:1] + strconv.Itoa(len(k)%10)
		req := fmt.Sprintf("%s %s 0 0 %d\r\n%s\r\n", step, k, len(tail), tail)
		if v == nil {
			return memcache.CmdAppend, req, "NOT_STORED\r\n"
		}
		s := *v + tail
		if step == "prepend" {
			s = tail + *v
		}
		m[k] = &s
		return memcache.CmdAppend, req, "STORED\r\n"
	case "cas":
		// No CAS value is this large in a fresh memcached: the value
		// held, if any, has another.
		req := "cas " + k + " 0 0 1 999999999\r\nz\r\n"
		if v == nil {
			return memcache.CmdCas, req, "NOT_FOUND\r\n"
		}
		return memcache.CmdCas, req, "EXISTS\r\n"
	case "delete":
		m[k] = nil
		if v == nil {
			return memcache.CmdDelete, "delete " + k + "\r\n", "NOT_FOUND\r\n"
		}
		return memcache.CmdDelete, "delete " + k + "\r\n", "DELETED\r\n"
	case "set":
		s := "7"
		m[k] = &s
		return memcache.CmdSet, "set " + k + " 0 0 1\r\n7\r\n", "STORED\r\n"
	}
	panic("unknown step " + step)
}

// orderWant is a request of the script and the reply it should get.
type orderWant struct {
	cmd        memcache.Command
	req, reply string
}

// script returns the requests for keys, one key's after another's, with
// the replies m gives, and their text.
func (m orderModel) script(keys []string) ([]orderWant, string) {
	// Each key is read first, so that the read falls back, then written
	// in one of three ways while the read may still be falling back.
	script := []string{"get", "", "get", "incr", "append", "prepend", "get", "cas", "append", "get", "delete", "get",
		"incr", "append", "set", "incr", "prepend", "get"}
	first := []string{"set", "delete", "append"}
	var wants []orderWant
	var pipeline strings.Builder
	for i, k := range keys {
		for _, step := range script {
			if step == "" {
				step = first[i%len(first)]
			}
			cmd, req, reply := m.apply(step, k)
			wants = append(wants, orderWant{cmd, req, reply})
			pipeline.WriteString(req)
		}
	}
	return wants, pipeline.String()
}

// TestWarmPipelinedClientKeepsOrder: one client pipelining mixed commands
// on keys a change moved, inside the migration window, gets every reply
// as if its requests were applied one after another, and the keys hold
// what that order leaves once the window has closed.
func TestWarmPipelinedClientKeepsOrder(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 4)
	s := startProxy(t, c.yaml("  distribution: ring\n  warm: {quiet: 1000000}\n", 0, 1, 2))
	cl := dial(t, s.Addr("p").String())
	all := testKeys("ord", 400)
	model := orderModel{}
	for _, k := range all {
		setValue(cl, k, "10", 0, 0)
	}
	was := routeNames(s.testPool("p"), all)
	reload(t, s, c.yaml("  distribution: ring\n  warm: {quiet: 1000000}\n", 0, 1, 2, 3))
	p := s.testPool("p")
	now := routeNames(p, all)
	var keys []string
	for i, k := range all {
		if was[i] != now[i] {
			keys = append(keys, k)
			ten := "10"
			model[k] = &ten
		}
	}
	if len(keys) < 40 {
		t.Fatalf("%d keys moved: too few", len(keys))
	}
	wants, pipeline := model.script(keys)
	sent := make(chan error, 1)
	go func() {
		_, err := cl.conn.Write([]byte(pipeline))
		sent <- err
	}()
	bad := 0
	for _, w := range wants {
		if got := cl.reply(w.cmd); got != w.reply {
			if bad++; bad <= 5 {
				t.Errorf("%q: %q, want %q", w.req, got, w.reply)
			}
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if bad > 0 {
		t.Errorf("%d of %d replies out of order", bad, len(wants))
	}
	m := p.place.Load().mig
	if m == nil {
		t.Fatal("the window closed before the requests were answered")
	}
	m.quietOnce.Do(func() { close(m.quietCh) })
	eventually(t, "the window to close", func() bool { return p.place.Load().mig == nil })
	wrong := 0
	for _, k := range keys {
		want := ""
		if v := model[k]; v != nil {
			want = *v
		}
		if got := getValue(cl, k); got != want {
			if wrong++; wrong <= 5 {
				t.Errorf("after the window %s holds %q, want %q", k, got, want)
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d keys hold a value out of order", wrong, len(keys))
	}
}

// TestWarmDeleteRacingCopyDoesNotResurrect puts a delete between a
// fallback's read at the previous server and its copy to the new one: the
// previous server's reply to the fallback is held until the delete has
// been sent to both servers. The copy must not bring the key back.
func TestWarmDeleteRacingCopyDoesNotResurrect(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 4)
	g := startGate(t, c.ms[0].addr)
	lines := func(idx ...int) []string {
		out := c.lines(idx...)
		out[0] = fmt.Sprintf("%s:1 m0", g.addr) // m0 behind the gate
		return out
	}
	s := startProxy(t, placementYAML("  distribution: ring\n", lines(0, 1, 2)))
	cl := dial(t, s.Addr("p").String())
	keys := testKeys("race", 300)
	for _, k := range keys {
		setValue(cl, k, "old", 0, 0)
	}
	was := routeNames(s.testPool("p"), keys)
	reload(t, s, placementYAML("  distribution: ring\n", lines(0, 1, 2, 3)))
	now := routeNames(s.testPool("p"), keys)
	var moved []string
	for i, k := range keys {
		if was[i] == "m0" && now[i] == "m3" {
			moved = append(moved, k)
		}
	}
	if len(moved) < 3 {
		t.Fatalf("%d keys moved from m0 to m3", len(moved))
	}
	for _, k := range moved[:3] {
		g.hold(true)
		reader, deleter := dial(t, s.Addr("p").String()), dial(t, s.Addr("p").String())
		read := make(chan string, 1)
		go func() { read <- reader.do("get " + k + "\r\n") }()
		g.await(t, "mg "+k) // the fallback's read is at m0; its reply is held
		deleted := make(chan string, 1)
		go func() { deleted <- deleter.do("delete " + k + "\r\n") }()
		g.await(t, "md "+k) // the delete has been sent to m3 and to m0
		g.hold(false)
		if got := <-deleted; got != "DELETED\r\n" {
			t.Fatalf("delete %s: %q", k, got)
		}
		<-read // the value from before the delete, or a miss: either is a read concurrent with it
		if got := getValue(cl, k); got != "" {
			t.Fatalf("%s deleted, then read back %q: the fallback's copy brought it back", k, got)
		}
		if it, ok := dialDirect(t, c.ms[3]).get(k); ok {
			t.Fatalf("%s deleted, and the new server holds %+v", k, it)
		}
	}
}
