package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// TestGarbageClient sends random bytes on one connection while another
// client works: the garbage gets error replies or its connection closed,
// and the other client notices nothing.
func TestGarbageClient(t *testing.T) {
	m := startMemcached(t, 0)
	s := startProxy(t, poolYAML("", m))
	good := dial(t, s.Addr("p").String())
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		bad := dial(t, s.Addr("p").String())
		junk := make([]byte, 1+r.IntN(4096))
		for i := range junk {
			junk[i] = byte(r.IntN(256))
			if r.IntN(10) == 0 {
				junk[i] = '\n'
			}
		}
		_, _ = bad.conn.Write(junk)
		_ = bad.conn.(*net.TCPConn).CloseWrite()
		// Everything the proxy sends back is error lines, then EOF.
		out, err := io.ReadAll(bad.conn)
		if err != nil {
			t.Fatalf("round %d: reading garbage replies: %v", round, err)
		}
		for _, line := range strings.SplitAfter(string(out), "\r\n") {
			if line != "" && !memcache.IsErrorReply([]byte(line)) && !strings.HasPrefix(line, "END") {
				t.Fatalf("round %d: unexpected reply line %q", round, line)
			}
		}
		if got := good.do(fmt.Sprintf("set g%d 0 0 1\r\nx\r\n", round)); got != "STORED\r\n" {
			t.Fatalf("good client: %q", got)
		}
	}
}

func TestOversizedValue(t *testing.T) {
	m := startMemcached(t, 0)
	s := startProxy(t, poolYAML("  max_value_size: 1024\n", m))
	c := dial(t, s.Addr("p").String())
	big := strings.Repeat("x", 2000)
	if got := c.do("set k 0 0 2000\r\n" + big + "\r\n"); got != "SERVER_ERROR object too large for cache\r\n" {
		t.Fatalf("oversized set: %q", got)
	}
	if got := c.do("set k 0 0 3\r\nabc\r\n"); got != "STORED\r\n" {
		t.Fatalf("set after oversized value: %q", got)
	}
	// A data block that does not end where its length says cannot be
	// resynchronised: error, then the connection is closed.
	c.send("set k 0 0 1\r\nabc\r\n")
	if got := c.reply(memcache.CmdVersion); got != "CLIENT_ERROR bad data chunk\r\n" {
		t.Fatalf("bad chunk: %q", got)
	}
	if _, err := c.r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("connection not closed after bad chunk: %v", err)
	}
}

// TestSlowlorisClosedWhenIdle checks that a client that sends half a
// request and stalls is disconnected after the idle timeout, while
// another client is served.
func TestSlowlorisClosedWhenIdle(t *testing.T) {
	m := startMemcached(t, 0)
	s := startProxy(t, poolYAML("  client_idle_timeout: 500\n", m))
	slow := dial(t, s.Addr("p").String())
	slow.send("get half-a-req")
	good := dial(t, s.Addr("p").String())
	if got := good.do("get x\r\n"); got != "END\r\n" {
		t.Fatal(got)
	}
	if _, err := slow.r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("slow client not closed: %v", err)
	}
}

// TestHalfClosedClient sends requests and closes its write side: every
// reply still arrives, then EOF.
func TestHalfClosedClient(t *testing.T) {
	m := startMemcached(t, 0)
	s := startProxy(t, poolYAML("", m))
	c := dial(t, s.Addr("p").String())
	var want strings.Builder
	for i := range 100 {
		c.send(fmt.Sprintf("set h%d 0 0 1\r\nx\r\nget h%d\r\n", i, i))
		fmt.Fprintf(&want, "STORED\r\nVALUE h%d 0 1\r\nx\r\nEND\r\n", i)
	}
	_ = c.conn.(*net.TCPConn).CloseWrite()
	out, err := io.ReadAll(c.r)
	if err != nil || string(out) != want.String() {
		t.Fatalf("half-closed client got %d bytes (err %v), want %d", len(out), err, want.Len())
	}
}

func TestMaxClientConnections(t *testing.T) {
	m := startMemcached(t, 0)
	s := startProxy(t, poolYAML("  max_client_connections: 2\n", m))
	a, b := dial(t, s.Addr("p").String()), dial(t, s.Addr("p").String())
	a.do("version\r\n")
	b.do("version\r\n")
	c := dial(t, s.Addr("p").String())
	if got := c.reply(memcache.CmdVersion); got != "SERVER_ERROR too many open connections\r\n" {
		t.Fatalf("third connection: %q", got)
	}
	a.conn.Close()
	eventually(t, "a slot to free", func() bool { return s.testPool("p").stats.currConns.Load() < 2 })
	if got := dial(t, s.Addr("p").String()).do("version\r\n"); !strings.HasPrefix(got, "VERSION") {
		t.Fatalf("after a close: %q", got)
	}
}

// silentServer accepts connections and reads without ever answering.
func silentServer(t *testing.T) string {
	return fakeServer(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
}

// TestSlowServerTimesOut puts a server that never answers beside a real
// one: its keys get SERVER_ERROR after the pool's timeout, the real one's
// keys work, and a multi-get over both returns the real one's values.
func TestSlowServerTimesOut(t *testing.T) {
	m := startMemcached(t, 0)
	silent := silentServer(t)
	// The timeout leaves a loaded machine's memcached ample time to answer.
	s := startProxy(t, fmt.Sprintf("p:\n  listen: 127.0.0.1:0\n  hash: md5\n  timeout: 1000\n  server_failure_limit: 100\n  servers:\n   - %s:1\n   - %s:1\n", m.addr, silent))
	pl := s.testPool("p")
	var live, slow string
	for i := 0; live == "" || slow == ""; i++ {
		k := fmt.Sprint("t", i)
		if ownerOf(pl, k) == m.addr {
			live = k
		} else {
			slow = k
		}
	}
	c := dial(t, s.Addr("p").String())
	if got := c.do("get " + slow + "\r\n"); got != "SERVER_ERROR Connection timed out\r\n" {
		t.Fatalf("slow server's key: %q", got)
	}
	if got := c.do("set " + live + " 0 0 1\r\nx\r\n"); got != "STORED\r\n" {
		t.Fatalf("live server's key: %q", got)
	}
	want := "VALUE " + live + " 0 1\r\nx\r\nEND\r\n"
	if got := c.do("get " + slow + " " + live + "\r\n"); got != want {
		t.Fatalf("multi-get over both: %q, want %q", got, want)
	}
}

// TestShutdownNoLeak serves clients with requests in flight, scrapes
// /metrics, shuts down, and checks that every reply was written and that
// every goroutine the server started has ended.
func TestShutdownNoLeak(t *testing.T) {
	m := startMemcached(t, 0)
	base := runtime.NumGoroutine()
	cfg, err := ParseConfig([]byte("kolco:\n  metrics_listen: 127.0.0.1:0\n" + poolYAML("  server_connections: 2\n", m)))
	if err != nil {
		t.Fatal(err)
	}
	s := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	var clients []*mc
	for i := range 5 {
		c := dial(t, s.Addr("p").String())
		// Served before the pipeline starts: a connection still in the
		// listener's accept queue when Shutdown closes the listener is
		// reset by the kernel, with its requests unread.
		if got := c.do("version\r\n"); !strings.HasPrefix(got, "VERSION ") {
			t.Fatalf("client %d: version: %q", i, got)
		}
		for j := range 50 {
			c.send(fmt.Sprintf("set s%d.%d 0 0 1\r\nx\r\n", i, j))
		}
		clients = append(clients, c)
	}
	resp, err := http.Get("http://" + s.MetricsAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "kolco_proxy_request_duration_seconds") {
		t.Fatalf("metrics lack the latency histogram:\n%.500s", body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for i, c := range clients {
		for j := range 50 {
			if got := c.reply(memcache.CmdSet); got != "STORED\r\n" {
				t.Fatalf("client %d reply %d after shutdown: %q", i, j, got)
			}
		}
		if _, err := c.r.ReadByte(); !errors.Is(err, io.EOF) {
			t.Fatalf("client %d not closed: %v", i, err)
		}
		c.conn.Close()
	}
	http.DefaultClient.CloseIdleConnections()
	eventually(t, "goroutines to end", func() bool { return runtime.NumGoroutine() <= base })
}

// TestPreconnect checks that preconnect opens server_connections
// connections to every server before any request.
func TestPreconnect(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	startProxy(t, fmt.Sprintf("p:\n  listen: 127.0.0.1:0\n  preconnect: true\n  server_connections: 3\n  servers:\n   - %s:1\n", ln.Addr()))
	for i := range 3 {
		select {
		case c := <-accepted:
			defer c.Close()
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of 3 connections opened", i)
		}
	}
}

// TestShutdownKeepsItsDeadline: a request waiting for a server that never
// answers does not hold Shutdown past its context, whatever the pool's
// timeout.
func TestShutdownKeepsItsDeadline(t *testing.T) {
	silent := silentServer(t)
	cfg, err := ParseConfig([]byte(fmt.Sprintf("p:\n  listen: 127.0.0.1:0\n  timeout: 30000\n  servers:\n   - %s:1\n", silent)))
	if err != nil {
		t.Fatal(err)
	}
	s := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	c := dial(t, s.Addr("p").String())
	c.send("get k\r\n")
	eventually(t, "the request at the server", func() bool { return s.testPool("p").backends[0].stats.requests.Load() == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want the context's deadline", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Shutdown with a 200 ms context took %v", d)
	}
}

// TestMergedServerErrorPassedOn: when every server of a split get answers
// with its own error line, the client gets that line, not a second prefix.
func TestMergedServerErrorPassedOn(t *testing.T) {
	const line = "SERVER_ERROR out of memory writing get response\r\n"
	oom := func(c net.Conn) {
		r := bufio.NewReader(c)
		for {
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
			_, _ = io.WriteString(c, line)
		}
	}
	a, b := fakeServer(t, oom), fakeServer(t, oom)
	s := startProxy(t, fmt.Sprintf("p:\n  listen: 127.0.0.1:0\n  hash: md5\n  timeout: 10000\n  server_failure_limit: 100\n  servers:\n   - %s:1\n   - %s:1\n", a, b))
	pl := s.testPool("p")
	var ka, kb string
	for i := 0; ka == "" || kb == ""; i++ {
		k := fmt.Sprint("m", i)
		if ownerOf(pl, k) == a {
			ka = k
		} else {
			kb = k
		}
	}
	if got := dial(t, s.Addr("p").String()).do("get " + ka + " " + kb + "\r\n"); got != line {
		t.Fatalf("get over two failing servers: %q, want %q", got, line)
	}
}

// blackhole returns an address whose connects hang: a listener with a
// full accept queue that never accepts.
func blackhole(t *testing.T) string {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	for range 4 { // fill the accept queue
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			t.Cleanup(func() { c.Close() })
		}
	}
	return addr
}

// TestPreconnectDoesNotHoldReload: adding a pool whose server's connects
// hang does not make the reload, or the other pools' new clients, wait
// for them.
func TestPreconnectDoesNotHoldReload(t *testing.T) {
	t.Parallel()
	m := startMemcached(t, 0)
	base := poolYAML("", m)
	s := startProxy(t, base)
	hole := blackhole(t)
	cfg, err := ParseConfig([]byte(base + fmt.Sprintf("q:\n  listen: 127.0.0.1:%d\n  preconnect: true\n  server_connections: 4\n  timeout: 1000\n  servers:\n   - %s:1\n", freePort(t), hole)))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := s.Reload(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("the reload took %v: it waited for the connects", d)
	}
	if got := dial(t, s.Addr("p").String()).do("version\r\n"); !strings.HasPrefix(got, "VERSION ") {
		t.Fatalf("a new client of the other pool: %q", got)
	}
}

// TestClientThatDoesNotReadIsCut: a client that sends requests and never
// reads the replies is closed after client_idle_timeout, like one that
// sends nothing.
func TestClientThatDoesNotReadIsCut(t *testing.T) {
	m := startMemcached(t, 0)
	s := startProxy(t, poolYAML("  client_idle_timeout: 300\n", m))
	// The value is set on the server itself: a set through the proxy that
	// a busy machine kept over the timeout would be cut for being slow.
	val := strings.Repeat("v", 100_000)
	if got := dial(t, m.addr).do("set big 0 0 100000\r\n" + val + "\r\n"); got != "STORED\r\n" {
		t.Fatalf("set: %q", got)
	}
	c := dial(t, s.Addr("p").String())
	// 200 replies of 100 kB: far more than the socket buffers hold.
	c.send(strings.Repeat("get big\r\n", 200))
	eventually(t, "the stalled client closed", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.listening.clients) == 0
	})
}

// TestErrorsCountRequests: when a connection fails with several requests
// on it, the server's error figure counts each of them.
func TestErrorsCountRequests(t *testing.T) {
	silent := silentServer(t)
	s := startProxy(t, fmt.Sprintf("p:\n  listen: 127.0.0.1:0\n  timeout: 300\n  server_failure_limit: 100\n  servers:\n   - %s:1\n", silent))
	c := dial(t, s.Addr("p").String())
	c.send(strings.Repeat("get k\r\n", 10))
	for range 10 {
		if got := c.reply(memcache.CmdGet); !strings.HasPrefix(got, "SERVER_ERROR") {
			t.Fatalf("get on a silent server: %q", got)
		}
	}
	if n := s.testPool("p").backends[0].stats.errors.Load(); n != 10 {
		t.Errorf("errors = %d for 10 failed requests", n)
	}
}
