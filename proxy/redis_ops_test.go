package proxy

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// redisOpsYAML is a Redis pool over servers with the stats port, the
// admin endpoint and quick stats refreshes.
func redisOpsYAML(servers ...*redisServer) string {
	return "kolco:\n  stats_listen: 127.0.0.1:0\n  stats_interval: 100\n  admin_listen: \":0\"\n" + redisPoolYAML("", servers...)
}

// TestRedisShutdownDrains: a shutdown drains a Redis pool's clients as a
// memcached pool's: an idle client is closed at once; a client halfway
// through a request, and one that connected but has not sent its first
// request, get their answers, then are closed.
func TestRedisShutdownDrains(t *testing.T) {
	s := startProxy(t, redisPoolYAML("", startRedis(t, 0)))
	addr := s.Addr("p").String()
	idle, half, fresh := dialRedis(t, addr), dialRedis(t, addr), dialRedis(t, addr)
	if got := idle.do("SET", "k", "x"); got != "+OK\r\n" {
		t.Fatalf("SET: %q", got)
	}
	_, _ = half.conn.Write([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhel")) // the rest after the shutdown began
	eventually(t, "three clients, one reading a request", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for conn, c := range s.listening.clients {
			if conn.RemoteAddr().String() == half.conn.LocalAddr().String() {
				return len(s.listening.clients) == 3 && c.drains.inRequest.Load()
			}
		}
		return false
	})
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		done <- s.Shutdown(ctx)
	}()
	if !idle.closed() {
		t.Error("the idle client was not closed")
	}
	_, _ = half.conn.Write([]byte("lo\r\n"))
	if got, err := half.read(); got != "+OK\r\n" || err != nil {
		t.Errorf("the request under way at the shutdown: %q, %v", got, err)
	}
	if got := fresh.do("GET", "k"); got != "$5\r\nhello\r\n" {
		t.Errorf("the first request of a client connected before the shutdown: %q", got)
	}
	for _, c := range []*rc{half, fresh} {
		if !c.closed() {
			t.Error("a drained client left open")
		}
	}
	if err := <-done; err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// TestRedisFigures: a Redis pool's traffic shows in the stats port's
// figures (client_eof, forward_error, fragments, per server requests and
// responses), in the Prometheus metrics by Redis command, and the admin
// endpoint says where each key lives: the server a SET through the proxy
// reaches.
func TestRedisFigures(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0)}
	s := startProxy(t, redisOpsYAML(rs...))
	c := dialRedis(t, s.Addr("p").String())
	keys := make([]string, 20)
	mget := []string{"MGET"}
	for i := range keys {
		keys[i] = fmt.Sprint("key", i)
		mget = append(mget, keys[i])
		if got := c.do("SET", keys[i], "v"); got != "+OK\r\n" {
			t.Fatalf("SET: %q", got)
		}
	}
	for _, k := range keys {
		var locs []Location
		if code := adminGet(t, s, "/v1/pools/p/locate?key="+urlKey(k), "", &locs); code != http.StatusOK || len(locs) != 1 || len(locs[0].Servers) != 1 {
			t.Fatalf("locate %q: %d %+v", k, code, locs)
		}
		if got := dialRedis(t, locs[0].Servers[0].Addr).do("GET", k); got != "$1\r\nv\r\n" {
			t.Errorf("%q: the admin endpoint says %s, which answers %q", k, locs[0].Servers[0].Name, got)
		}
	}
	var pools []PoolStatus
	if code := adminGet(t, s, "/v1/pools", "", &pools); code != http.StatusOK || len(pools) != 1 || pools[0].Protocol != "redis" {
		t.Errorf("pools: %d %+v", code, pools)
	}
	c.do(mget...)   // over both servers: one fragment each
	c.do("GET", "") // to one server
	rs[1].stop()
	failed := 0
	for _, k := range keys {
		if ownerOf(s.testPool("p"), k) == rs[1].addr {
			c.do("GET", k) // the proxy's error: a forward error
			failed++
		}
	}
	c.conn.Close()
	var doc map[string]any
	eventually(t, "the stats refreshed after the traffic", func() bool {
		doc = readStatsPort(t, s.StatsAddr().String())
		return statAt(doc, "p", "client_eof") == 1.0
	})
	want := map[string]float64{"fragments": 2, "forward_error": float64(failed), "client_err": 0, "client_connections": 0}
	for k, v := range want {
		if got := statAt(doc, "p", k); got != v {
			t.Errorf("p.%s: %v, want %v", k, got, v)
		}
	}
	if got := statAt(doc, "p", "r0", "responses"); got != statAt(doc, "p", "r0", "requests") || got.(float64) < 2 {
		t.Errorf("r0: %v requests, %v responses", statAt(doc, "p", "r0", "requests"), got)
	}
	for cmd, n := range map[string]int{"set": len(keys), "mget": 1, "get": 1 + failed} {
		if got := metricValue(t, s, "kolco_proxy_requests_total", fmt.Sprintf("command=%q,pool=\"p\"", cmd)); got != float64(n) {
			t.Errorf("kolco_proxy_requests_total of %s: %v, want %d", cmd, got, n)
		}
	}
}
