package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/proxy"
	"github.com/kolco-dev/kolco/proxy/memcache"
)

func runProxyCmd(args ...string) (string, error) {
	cmd := newProxyCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestProxyCheckExplains(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nutcracker.yml")
	conf := "alpha:\n  listen: 127.0.0.1:22121\n  hash: fnv1a_64\n  distribution: ketama\n" +
		"  auto_eject_hosts: true\n  servers:\n   - 127.0.0.1:11211:1\n   - 127.0.0.1:11212:1 b\n"
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runProxyCmd("--check", "--config", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`pool "alpha": memcached on 127.0.0.1:22121`, `ring name "b"`, "(rehash)"} {
		if !strings.Contains(out, want) {
			t.Errorf("--check output lacks %q:\n%s", want, out)
		}
	}
}

func TestProxyCheckErrors(t *testing.T) {
	if _, err := runProxyCmd("--check"); !errors.As(err, new(usageError)) {
		t.Fatalf("no --config: %v, want a usage error", err)
	}
	path := filepath.Join(t.TempDir(), "bad.yml")
	if err := os.WriteFile(path, []byte("p:\n  listen: 127.0.0.1:1\n  servers: [\"x:1:0\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := runProxyCmd("--check", "--config", path); !errors.Is(err, proxy.ErrBadConfig) {
		t.Fatalf("bad config: %v, want ErrBadConfig", err)
	}
}

// startMemcached starts a real memcached on a free loopback port, with
// extra arguments, and returns its address; Cleanup stops it.
func startMemcached(t *testing.T, extra ...string) string {
	t.Helper()
	bin := realprog.Binary(t, "memcached", "memcached")
	st := realprog.StartOwned(t, "memcached", bin, func(port int) []string {
		args := []string{"-l", "127.0.0.1", "-p", fmt.Sprint(port), "-U", "0", "-m", "64", "-t", "1"}
		args = append(args, extra...) // a later -m wins
		if os.Geteuid() == 0 {
			args = append(args, "-u", "root") // memcached refuses to run as root otherwise
		}
		return args
	}, realprog.MemcachedPID)
	return fmt.Sprintf("127.0.0.1:%d", st.Port)
}

// mcConn is a minimal memcached text protocol client.
type mcConn struct {
	t    *testing.T
	conn net.Conn
	rr   *memcache.ReplyReader
}

func dialMC(t *testing.T, addr string) *mcConn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	return &mcConn{t: t, conn: conn, rr: memcache.NewReplyReader(conn, 0)}
}

func (c *mcConn) send(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, s); err != nil {
		c.t.Fatal(err)
	}
}

// reply reads one whole reply to a request with command cmd.
func (c *mcConn) reply(cmd memcache.Command) string {
	c.t.Helper()
	b, _, err := c.rr.Read(nil, cmd, nil)
	if err != nil {
		c.t.Fatalf("reading %v reply: %v (got %q)", cmd, err, b)
	}
	return string(b)
}

// set stores key with a one-byte value and returns the reply.
func (c *mcConn) set(key string) string {
	c.t.Helper()
	c.send("set " + key + " 0 0 1\r\nx\r\n")
	return c.reply(memcache.CmdSet)
}

// holds reports whether the memcached at addr holds key.
func holds(t *testing.T, addr, key string) bool {
	c := dialMC(t, addr)
	defer c.conn.Close() // a test asks often: memcached takes 1,024 connections
	c.send("get " + key + "\r\n")
	return strings.HasPrefix(c.reply(memcache.CmdGet), "VALUE")
}

// writeProxyConfig writes a one-pool configuration listening on listen in
// front of server, with the /metrics endpoint on a free port.
func writeProxyConfig(t *testing.T, path, listen, server string) {
	t.Helper()
	y := fmt.Sprintf("kolco:\n  metrics_listen: 127.0.0.1:0\np:\n  listen: %s\n  timeout: 10000\n  servers:\n   - %s:1\n", listen, server)
	if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
}

// serveProxy serves the file at path as "kolco proxy --watch-config"
// does, checking it for changes every watch (never when negative), and
// returns the running server; Cleanup stops it and checks that serve
// returned cleanly.
func serveProxy(t *testing.T, path string, watch time.Duration) *proxy.Server {
	t.Helper()
	return serveRun(t, proxyRun{path: path, watch: watch, watchConfig: watch > 0, log: slog.New(slog.NewTextHandler(io.Discard, nil)), keepThreads: true})
}

// serveRun serves run as "kolco proxy" does and returns the running
// server; Cleanup stops it and checks that serve returned cleanly.
func serveRun(t *testing.T, run proxyRun) *proxy.Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan *proxy.Server, 1)
	done := make(chan error, 1)
	run.started = func(s *proxy.Server) { started <- s }
	run.keepThreads = true // the test process's threads are not the proxy's
	if run.stderr == nil {
		run.stderr = io.Discard
	}
	go func() {
		done <- run.serve(ctx)
	}()
	var s *proxy.Server
	select {
	case s = <-started:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve returned %v", err)
		}
	})
	return s
}

// eventually polls cond until it holds or 10 s pass, times the load (busy).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	// Ten seconds on a quiet machine, stretched by the load: at 8 busy
	// processes on 2 cores a SIGHUP's reload was not logged within 10 s.
	d := time.Duration(busy() * float64(10*time.Second))
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d.Round(time.Second), what)
		}
		time.Sleep(5 * time.Millisecond) // polling with a deadline, not synchronisation by sleep
	}
}

// scrape returns the value of an unlabelled metric on s's /metrics.
func scrape(t *testing.T, s *proxy.Server, name string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + s.MetricsAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %q", name, line)
			}
			return f
		}
	}
	return 0
}

// stat returns the value of one STAT line of the reply to stats.
func stat(t *testing.T, c *mcConn, name string) int {
	t.Helper()
	c.send("stats\r\n")
	for _, line := range strings.Split(c.reply(memcache.CmdStats), "\r\n") {
		if v, ok := strings.CutPrefix(line, "STAT "+name+" "); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("%s: %q", name, line)
			}
			return n
		}
	}
	t.Fatalf("stats lack %s", name)
	return 0
}

// TestProxyReloadsOnFileChange moves a pool from one server to another by
// editing its file while one client connection stays open with requests in
// flight; a file that does not validate changes nothing.
func TestProxyReloadsOnFileChange(t *testing.T) {
	a, b := startMemcached(t), startMemcached(t)
	path := filepath.Join(t.TempDir(), "kolco.yml")
	listen := fmt.Sprintf("127.0.0.1:%d", realprog.FreePorts(t, 1)[0])
	writeProxyConfig(t, path, listen, a)
	s := serveProxy(t, path, 10*time.Millisecond)
	c := dialMC(t, listen)
	if got := c.set("k0"); got != "STORED\r\n" || !holds(t, a, "k0") {
		t.Fatalf("first set: %q", got)
	}

	// Requests in flight while the file changes all get their replies.
	var batch strings.Builder
	for i := range 500 {
		fmt.Fprintf(&batch, "set f%d 0 0 1\r\nx\r\n", i)
	}
	c.send(batch.String())
	writeProxyConfig(t, path, listen, b)
	for i := range 500 {
		if got := c.reply(memcache.CmdSet); got != "STORED\r\n" {
			t.Fatalf("in-flight set %d across reload: %q", i, got)
		}
	}
	n := 0
	eventually(t, "requests to reach the new server", func() bool {
		n++
		k := fmt.Sprint("after-file-", n)
		return c.set(k) == "STORED\r\n" && holds(t, b, k)
	})

	// A file that does not validate is seen, refused, and changes nothing.
	if err := os.WriteFile(path, []byte("p: {listen: nowhere}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the broken file to be refused", func() bool { return scrape(t, s, "kolco_proxy_reload_failures_total") >= 1 })
	if got := c.set("still"); got != "STORED\r\n" || !holds(t, b, "still") {
		t.Fatalf("after a broken file: %q", got)
	}
	if got := stat(t, c, "total_connections"); got < 1 {
		t.Fatalf("stats lost: total_connections %d", got)
	}
}

// TestProxyReloadsOnSIGHUP reloads on SIGHUP alone (the file watch is off,
// so the reload proves the signal was handled).
func TestProxyReloadsOnSIGHUP(t *testing.T) {
	a, b := startMemcached(t), startMemcached(t)
	path := filepath.Join(t.TempDir(), "kolco.yml")
	listen := fmt.Sprintf("127.0.0.1:%d", realprog.FreePorts(t, 1)[0])
	writeProxyConfig(t, path, listen, a)
	serveProxy(t, path, -1)
	c := dialMC(t, listen)
	writeProxyConfig(t, path, listen, b)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	n := 0
	eventually(t, "requests to move to the second server", func() bool {
		n++
		k := fmt.Sprint("after-hup-", n)
		return c.set(k) == "STORED\r\n" && holds(t, b, k)
	})
}

// TestProxyWatchIsOptIn: by default an edited file is not applied until
// SIGHUP, as under nutcracker; kolco.watch_config: true (applied by that
// SIGHUP) turns the watch on, and the next edit is applied by itself.
func TestProxyWatchIsOptIn(t *testing.T) {
	a, b, c := startMemcached(t), startMemcached(t), startMemcached(t)
	path := filepath.Join(t.TempDir(), "kolco.yml")
	listen := fmt.Sprintf("127.0.0.1:%d", realprog.FreePorts(t, 1)[0])
	write := func(server, global string) {
		y := fmt.Sprintf("%sp:\n  listen: %s\n  timeout: 10000\n  servers:\n   - %s:1\n", global, listen, server)
		if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(a, "")
	serveRun(t, proxyRun{path: path, watch: 5 * time.Millisecond, log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	conn := dialMC(t, listen)
	write(b, "")
	// Watching off: 40 ticks of the watch pass and the edit is not
	// applied. (An absence can only be watched for a while.)
	deadline := time.Now().Add(200 * time.Millisecond)
	for n := 0; time.Now().Before(deadline); n++ {
		k := fmt.Sprint("off-", n)
		if got := conn.set(k); got != "STORED\r\n" || !holds(t, a, k) {
			t.Fatalf("with watching off, an edit was applied (set %q: %q)", k, got)
		}
	}
	write(b, "kolco:\n  watch_config: true\n")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	n := 0
	eventually(t, "SIGHUP to apply the file", func() bool {
		n++
		k := fmt.Sprint("hup-", n)
		return conn.set(k) == "STORED\r\n" && holds(t, b, k)
	})
	write(c, "kolco:\n  watch_config: true\n")
	eventually(t, "the watch to apply the edit", func() bool {
		n++
		k := fmt.Sprint("watched-", n)
		return conn.set(k) == "STORED\r\n" && holds(t, c, k)
	})
}
