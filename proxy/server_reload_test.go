package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// holds reports whether the memcached at m holds key.
func holds(t *testing.T, m *memcached, key string) bool {
	return strings.HasPrefix(dial(t, m.addr).do("get "+key+"\r\n"), "VALUE")
}

// TestReloadRemovesAndAddsPools removes a pool (its clients are closed after
// their replies) and adds one on a new address.
func TestReloadRemovesAndAddsPools(t *testing.T) {
	m := startMemcached(t, 0)
	s := startProxy(t, poolYAML("", m))
	c := dial(t, s.Addr("p").String())
	if got := c.do("version\r\n"); !strings.HasPrefix(got, "VERSION") {
		t.Fatal(got)
	}
	cfg, err := ParseConfig([]byte(strings.Replace(poolYAML("", m), "p:", "q:", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if s.Addr("p") != nil || s.Addr("q") == nil {
		t.Fatalf("pools after reload: p %v q %v", s.Addr("p"), s.Addr("q"))
	}
	if _, err := c.r.ReadByte(); err == nil {
		t.Fatal("client of the removed pool still open")
	}
	if got := dial(t, s.Addr("q").String()).do("set a 0 0 1\r\nx\r\n"); got != "STORED\r\n" {
		t.Fatalf("new pool: %q", got)
	}
}

// gatedServer answers every storage request with STORED, but only once
// gate is closed.
func gatedServer(t *testing.T, gate chan struct{}) string {
	return fakeServer(t, func(c net.Conn) {
		r := memcache.NewReader(c, memcache.Limits{})
		var req memcache.Request
		for r.Read(&req) == nil {
			<-gate
			if _, err := c.Write([]byte("STORED\r\n")); err != nil {
				return
			}
		}
	})
}

// TestReloadLetsInFlightFinish holds a request in flight at a server while
// the pool is reloaded onto another server: a new request on the same
// connection waits for it (replies keep order), both complete, the old one
// on the old server and the new one on the new server.
func TestReloadLetsInFlightFinish(t *testing.T) {
	gate := make(chan struct{})
	old := gatedServer(t, gate)
	m := startMemcached(t, 0)
	s := startProxy(t, fmt.Sprintf("p:\n  listen: 127.0.0.1:0\n  timeout: 30000\n  servers:\n   - %s:1\n", old))
	c := dial(t, s.Addr("p").String())
	c.send("set inflight 0 0 1\r\nx\r\n")
	oldPool := s.testPool("p")
	eventually(t, "the request to reach the old server", func() bool { return oldPool.backends[0].stats.requests.Load() == 1 })

	cfg, err := ParseConfig([]byte(poolYAML("", m)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	c.send("set after 0 0 1\r\ny\r\n")
	eventually(t, "the new request to reach the new server", func() bool { return holds(t, m, "after") })
	close(gate)
	for i, want := range []string{"STORED\r\n", "STORED\r\n"} {
		if got := c.reply(memcache.CmdSet); got != want {
			t.Fatalf("reply %d: %q", i, got)
		}
	}
	if holds(t, m, "inflight") {
		t.Fatal("the in-flight request was resent to the new server")
	}
}

// TestReloadMovedPoolKeepsClients: clients accepted before a pool moved to
// another address keep being served through later reloads of that pool.
func TestReloadMovedPoolKeepsClients(t *testing.T) {
	m := startMemcached(t, 0)
	a := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	b := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	config := func(listen, extra string) string {
		return strings.Replace(poolYAML(extra, m), "127.0.0.1:0", listen, 1)
	}
	s := startProxy(t, config(a, ""))
	c := dial(t, a)
	if got := c.do("set k 0 0 1\r\nx\r\n"); got != "STORED\r\n" {
		t.Fatal(got)
	}
	for _, y := range []string{config(b, ""), config(b, "  max_keys: 100\n")} {
		cfg, err := ParseConfig([]byte(y))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Reload(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		if got := c.do("get k\r\n"); got != "VALUE k 0 1\r\nx\r\nEND\r\n" {
			t.Fatalf("request %d after the move and a second reload: %q", i, got)
		}
	}
	if got := dial(t, b).do("get k\r\n"); got != "VALUE k 0 1\r\nx\r\nEND\r\n" {
		t.Fatalf("a client of the new address: %q", got)
	}
}

// TestReloadCanceledChangesNothing: a reload whose context is done by the
// time its pools are ready is undone: no new listener is left open and
// requests still go to the pool as it was.
func TestReloadCanceledChangesNothing(t *testing.T) {
	a, b := startMemcached(t, 0), startMemcached(t, 0)
	s := startProxy(t, poolYAML("", a))
	c := dial(t, s.Addr("p").String())
	q := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg, err := ParseConfig([]byte(poolYAML("", b) + "q:\n  listen: " + q + "\n  servers: [\"" + b.addr + ":1\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Reload(ctx, cfg); !errors.Is(err, context.Canceled) {
		t.Fatalf("Reload with a canceled context: %v", err)
	}
	if s.Addr("q") != nil {
		t.Fatal("the new pool is listed")
	}
	if conn, err := net.Dial("tcp", q); err == nil {
		conn.Close()
		t.Fatalf("the new pool's address %s still listens", q)
	}
	if got := c.do("set k 0 0 1\r\nx\r\n"); got != "STORED\r\n" || !holds(t, a, "k") || holds(t, b, "k") {
		t.Fatalf("set after the undone reload: %q, on the first server %v", got, holds(t, a, "k"))
	}
}

// TestReloadRemovesMovedPool: removing a pool that moved to another
// address closes the clients it accepted on its first address too.
func TestReloadRemovesMovedPool(t *testing.T) {
	m := startMemcached(t, 0)
	a := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	b := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	config := func(listen string) string {
		return strings.Replace(poolYAML("", m), "127.0.0.1:0", listen, 1)
	}
	s := startProxy(t, config(a))
	c := dial(t, a)
	if got := c.do("version\r\n"); !strings.HasPrefix(got, "VERSION") {
		t.Fatal(got)
	}
	for _, y := range []string{config(b), strings.Replace(config("127.0.0.1:0"), "p:", "q:", 1)} {
		cfg, err := ParseConfig([]byte(y))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Reload(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("a client of the removed pool's first address: %v, want EOF", err)
	}
}
