package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
	"github.com/kolco-dev/kolco/proxy/memcache"
)

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// fakeServer listens on a loopback port and runs serve, on a goroutine of
// its own, for every connection it accepts; the listener and connections
// close when the test ends.
func fakeServer(t *testing.T, serve func(net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			go serve(c)
		}
	}()
	return ln.Addr().String()
}

// memcached is a real memcached started by a test.
type memcached struct {
	addr   string
	port   int
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has exited
}

// startMemcached starts memcached on a free loopback port (or on port when
// non-zero), with extra options, and waits until it answers; Cleanup kills
// it.
func startMemcached(t testing.TB, port int, extra ...string) *memcached {
	t.Helper()
	for attempt := 0; ; attempt++ {
		p := port
		if p == 0 {
			p = freePort(t)
		}
		m := &memcached{addr: fmt.Sprintf("127.0.0.1:%d", p), port: p}
		// Another program may have taken the port between its choice
		// and the bind: then this memcached exits, or the one answering
		// is not this one. A port the test chose is tried again.
		retry := port == 0 && attempt < 4
		if !m.start(t, retry, append([]string{"-l", "127.0.0.1", "-p", fmt.Sprint(p)}, extra...)...) {
			continue
		}
		// A stats that times out on a busy machine is no other program's
		// answer; any other error is: an HTTP server's "400 Bad Request"
		// read while this memcached, slow to exit on the taken port, still
		// looked alive, gave a test that server.
		pid, err := realprog.MemcachedPID(m.addr)
		ours := err == nil && pid == m.cmd.Process.Pid || err != nil && isTimeout(err)
		if m.alive() && ours || !retry {
			return m
		}
		m.stop()
	}
}

// startMemcachedUnix starts memcached on a unix socket in a temporary
// directory and waits until it answers; Cleanup kills it.
func startMemcachedUnix(t testing.TB) *memcached {
	t.Helper()
	m := &memcached{addr: filepath.Join(t.TempDir(), "mc.sock")}
	m.run(t, "-s", m.addr, "-a", "0700")
	return m
}

// run starts memcached listening as where says, on m.addr, and waits
// until it answers.
func (m *memcached) run(t testing.TB, where ...string) {
	t.Helper()
	m.start(t, false, where...)
}

// start starts memcached listening as where says, on m.addr, and waits
// until it answers. When it exits first (its port taken), start returns
// false if mayFail, else fails the test.
func (m *memcached) start(t testing.TB, mayFail bool, where ...string) bool {
	t.Helper()
	bin := needBinary(t, "memcached")
	args := append(where, "-U", "0", "-m", "64", "-t", "1")
	if os.Geteuid() == 0 {
		args = append(args, "-u", "root") // memcached refuses to run as root otherwise
	}
	cmd := exec.Command(bin, args...)
	if err := testproc.Start(cmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	m.cmd, m.exited = cmd, exited
	t.Cleanup(m.stop)
	if !waitServing(t, m.addr, exited) {
		if mayFail {
			return false
		}
		t.Fatalf("memcached on %s exited during startup", m.addr)
	}
	return true
}

// alive reports whether the memcached started last has not exited.
func (m *memcached) alive() bool {
	select {
	case <-m.exited:
		return false
	default:
		return true
	}
}

func (m *memcached) stop() {
	if m.cmd != nil && m.cmd.Process != nil {
		_ = m.cmd.Process.Kill()
		<-m.exited
		m.cmd = nil
	}
}

// waitServing polls addr (host:port or a unix socket path) until it
// accepts a connection (realprog.Patience at most), and returns false if
// exited is closed first: the program died while starting.
func waitServing(t testing.TB, addr string, exited <-chan struct{}) bool {
	t.Helper()
	deadline := time.Now().Add(realprog.Patience)
	for {
		c, err := net.DialTimeout(network(addr), addr, time.Second)
		if err == nil {
			c.Close()
			return true
		}
		select {
		case <-exited:
			return false
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never listened: %v", addr, err)
		}
		time.Sleep(10 * time.Millisecond) // polling with a deadline, not synchronisation by sleep
	}
}

// waitListening polls addr (host:port or a unix socket path) until it
// accepts a connection (realprog.Patience at most).
func waitListening(t testing.TB, addr string) {
	t.Helper()
	deadline := time.Now().Add(realprog.Patience)
	for {
		c, err := net.DialTimeout(network(addr), addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never listened: %v", addr, err)
		}
		time.Sleep(10 * time.Millisecond) // polling with a deadline, not synchronisation by sleep
	}
}

// eventually polls cond until it holds, failing the test after a minute.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	// A bound on a wait for what must happen, not a measure of how soon:
	// generous, so that a busy machine only makes the test slower.
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// poolYAML writes a one-pool configuration listening on a free port, with
// extra pool settings.
func poolYAML(extra string, servers ...*memcached) string {
	var b strings.Builder
	b.WriteString("p:\n  listen: 127.0.0.1:0\n")
	b.WriteString(extra)
	if !strings.Contains(extra, "  timeout:") {
		// Generous, so that a loaded test machine never turns a slow reply
		// into a SERVER_ERROR; tests of timeouts set their own.
		b.WriteString("  timeout: 10000\n")
	}
	b.WriteString("  servers:\n")
	for _, m := range servers {
		fmt.Fprintf(&b, "   - %s:1\n", m.addr)
	}
	return b.String()
}

// startProxy starts a Server for yaml; Cleanup shuts it down.
func startProxy(t testing.TB, yaml string) *Server {
	t.Helper()
	cfg, err := ParseConfig([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	s := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return s
}

// mc is a minimal test client.
type mc struct {
	t    testing.TB
	conn net.Conn
	r    *bufio.Reader
	rr   *memcache.ReplyReader
}

func dial(t testing.TB, addr string) *mc {
	t.Helper()
	conn, err := net.DialTimeout(network(addr), addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(mcPatience))
	r := bufio.NewReader(conn)
	return &mc{t: t, conn: conn, r: r, rr: memcache.NewReplyReader(r, 0)}
}

// mcPatience bounds the wait for a reply: a guard against a test that
// waits for one that never comes, counted from the last request sent, so
// that a long test on a busy machine is slower, not failed (one deadline
// from the dial cut a workload's connection at 30 s under -race).
const mcPatience = 30 * time.Second

func (c *mc) send(s string) {
	c.t.Helper()
	_ = c.conn.SetDeadline(time.Now().Add(mcPatience))
	if _, err := io.WriteString(c.conn, s); err != nil {
		c.t.Fatal(err)
	}
}

// reply reads one whole reply to a request with command cmd.
func (c *mc) reply(cmd memcache.Command) string {
	c.t.Helper()
	b, _, err := c.rr.Read(nil, cmd, nil)
	if err != nil {
		c.t.Fatalf("reading %v reply: %v (got %q)", cmd, err, b)
	}
	return string(b)
}

// do sends one request and returns its reply.
func (c *mc) do(s string) string {
	c.t.Helper()
	c.send(s)
	var req memcache.Request
	if err := memcache.NewReader(strings.NewReader(s), memcache.Limits{}).Read(&req); err != nil {
		return c.reply(memcache.CmdVersion) // an error line
	}
	return c.reply(req.Cmd)
}

// ownerOf returns the address of the server a read of key goes to.
func ownerOf(p *pool, key string) string {
	var sc routeScratch
	owners := p.place.Load().route([]byte(key), false, &sc)
	if len(owners) == 0 {
		return ""
	}
	return owners[0].addr
}

// configuredOwnerOf returns the address of the server that owns key by
// the pool's configured placement, whatever the servers' health: where a
// key lives with every server up.
func configuredOwnerOf(p *pool, key string) string {
	full := p.place.Load().configured()
	if len(full.servers) == 0 {
		return ""
	}
	return full.servers[full.pick.Index([]byte(key))].addr
}

// testPool returns a pool of cfg named "p", placed, not started.
func testPool(cfg *PoolConfig) (*pool, error) {
	return newPool(poolSpec{name: "p", cfg: cfg, front: frontOf(cfg), log: slog.New(slog.NewTextHandler(io.Discard, nil)), met: newMetrics()})
}

// cluster is real memcached servers, named m0, m1, ..., for tests of
// changes: a test configures a pool over some of them and reloads it over
// others.
type cluster struct {
	t  *testing.T
	ms []*memcached
}

func startCluster(t *testing.T, n int) *cluster {
	c := &cluster{t: t}
	for range n {
		c.ms = append(c.ms, startMemcached(t, 0))
	}
	return c
}

// lines returns the server lines of the servers with the indexes given.
func (c *cluster) lines(idx ...int) []string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = fmt.Sprintf("%s:1 m%d", c.ms[j].addr, j)
	}
	return out
}

// yaml returns a one-pool configuration over the servers idx.
func (c *cluster) yaml(extra string, idx ...int) string {
	return placementYAML("  timeout: 10000\n"+extra, c.lines(idx...))
}

// index returns the index of the server at addr.
func (c *cluster) index(addr string) int {
	for i, m := range c.ms {
		if m.addr == addr {
			return i
		}
	}
	c.t.Fatalf("no server at %s", addr)
	return -1
}

// direct is a connection straight to one memcached server.
type direct struct {
	t    testing.TB
	conn net.Conn
	r    *bufio.Reader
}

func dialDirect(t testing.TB, m *memcached) *direct {
	t.Helper()
	conn, err := net.DialTimeout(network(m.addr), m.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	return &direct{t: t, conn: conn, r: bufio.NewReader(conn)}
}

// item is what a server holds of a key.
type item struct {
	value string
	flags uint32
	ttl   int64 // -1: no expiry
	cas   uint64
}

// get returns the server's item of key, and whether it holds one.
func (d *direct) get(key string) (item, bool) {
	d.t.Helper()
	fmt.Fprintf(d.conn, "mg %s t f v c\r\n", key)
	line, err := d.r.ReadString('\n')
	if err != nil {
		d.t.Fatal(err)
	}
	if line == "EN\r\n" {
		return item{}, false
	}
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "VA" {
		d.t.Fatalf("mg %s: %q", key, line)
	}
	n, _ := strconv.Atoi(f[1])
	var it item
	for _, tok := range f[2:] {
		v, _ := strconv.ParseInt(tok[1:], 10, 64)
		switch tok[0] {
		case 't':
			it.ttl = v
		case 'f':
			it.flags = uint32(v)
		case 'c':
			it.cas = uint64(v)
		}
	}
	data := make([]byte, n+2)
	if _, err := io.ReadFull(d.r, data); err != nil {
		d.t.Fatal(err)
	}
	it.value = string(data[:n])
	return it, true
}

// set stores key on the server with no expiry.
func (d *direct) set(key, value string) {
	d.t.Helper()
	fmt.Fprintf(d.conn, "set %s 0 0 %d\r\n%s\r\n", key, len(value), value)
	if line, err := d.r.ReadString('\n'); err != nil || line != "STORED\r\n" {
		d.t.Fatalf("set %s: %q, %v", key, line, err)
	}
}

// getValue reads key through a proxy client and returns its value, or ""
// for a miss.
func getValue(c *mc, key string) string {
	c.t.Helper()
	reply := c.do("get " + key + "\r\n")
	if reply == "END\r\n" {
		return ""
	}
	_, rest, ok := strings.Cut(reply, "\r\n")
	v, _, ok2 := strings.Cut(rest, "\r\n")
	if !ok || !ok2 {
		c.t.Fatalf("get %s: %q", key, reply)
	}
	return v
}

// setValue writes key through a proxy client.
func setValue(c *mc, key, value string, flags, exptime int) {
	c.t.Helper()
	if reply := c.do(fmt.Sprintf("set %s %d %d %d\r\n%s\r\n", key, flags, exptime, len(value), value)); reply != "STORED\r\n" {
		c.t.Fatalf("set %s: %q", key, reply)
	}
}

// flushAll empties the server.
func (d *direct) flushAll() {
	d.t.Helper()
	if _, err := io.WriteString(d.conn, "flush_all\r\n"); err != nil {
		d.t.Fatal(err)
	}
	if line, err := d.r.ReadString('\n'); err != nil || line != "OK\r\n" {
		d.t.Fatalf("flush_all: %q, %v", line, err)
	}
}

// wantConfigKey validates yaml: accepted when key is "", else refused with
// a ConfigError naming key.
func wantConfigKey(t *testing.T, yaml, key string) {
	t.Helper()
	cfg, err := ParseConfig([]byte(yaml))
	if err == nil {
		err = cfg.Validate()
	}
	var ce *ConfigError
	switch {
	case key == "" && err != nil:
		t.Fatalf("refused: %v", err)
	case key != "" && !errors.As(err, &ce):
		t.Fatalf("got %v, want a ConfigError for %s", err, key)
	case key != "" && ce.Key != key:
		t.Fatalf("error names %q, want %q: %v", ce.Key, key, err)
	}
}

// wantExplained checks that --check of a pool of one server with the
// settings extra says want.
func wantExplained(t *testing.T, extra, want string) {
	t.Helper()
	cfg, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:0\n" + extra + "  servers:\n   - 127.0.0.1:11211:1\n"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := cfg.Explain(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), want) {
		t.Errorf("--check of %q lacks %q:\n%s", extra, want, b.String())
	}
}
