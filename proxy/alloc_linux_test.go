//go:build linux && !race && !msan && !asan

package proxy

import (
	"io"
	"net"
	"runtime"
	"testing"
	"time"
)

// allocCase is a request sent again and again on one client connection,
// the reply it must get each time, and the most heap allocations it may
// cost the proxy.
type allocCase struct {
	name, req, reply string
	max              float64
}

// mcAllocCases are memcached's requests whose allocations are counted.
var mcAllocCases = []allocCase{
	{"set", "set a 0 0 5\r\nhello\r\n", "STORED\r\n", 0.1},
	{"get", "get a\r\n", "VALUE a 0 5\r\nhello\r\nEND\r\n", 0.1},
	{"multi-get", "get a b c d e f\r\n", "VALUE a 0 5\r\nhello\r\nEND\r\n", 0.1},
}

// allocRow is a pool whose requests' allocations are counted: its
// protocol, settings and number of servers, and what is sent through it
// and checked (by default its protocol's cases, in turn).
type allocRow struct {
	proto, name, settings string
	servers               int
	run                   func(t *testing.T, s *Server)
}

// TestRequestAllocations counts the proxy's heap allocations per request
// in steady state, on one client connection, for each protocol's
// commands, in one table over both protocols: memcached's get, set and a
// two-server multi-get with one copy of each key (ketama), with two
// (ring), and once a change's migration window has closed, when a request
// costs what it cost before any change; Redis's GET, SET, an MGET split
// over two servers, a DEL of keys on both, a same-server command and a
// PING answered by the proxy. For both protocols, with the traffic sample
// on, the same requests allocate no more (the trace's slots and the
// hot-key summaries are made when the pool is), and a get the hot-key
// cache answers allocates nothing (for Redis, the read waiting for its
// server's PING, then answered from the value); the gets measured there
// are all the cache's hits. The rows share their protocol's servers,
// emptied before each. The test's own client allocates nothing per
// request. (Race and sanitizer builds read sockets through net.Conn and
// instrument allocations, so the count there means nothing.)
func TestRequestAllocations(t *testing.T) {
	const sample = "  traffic: {enabled: true, requests: 64, top_keys: 8}\n"
	c := startCluster(t, 3)
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0)}
	mcCases := func(t *testing.T, s *Server) { requestAllocations(t, s.Addr("p").String(), mcAllocCases) }
	rows := []allocRow{
		{"memcached", "one copy", "", 2, mcCases},
		{"memcached", "two copies", "  distribution: ring\n  replicas: 2\n", 2, mcCases},
		{"memcached", "after a change", "", 0, func(t *testing.T, _ *Server) {
			settings := "  distribution: ring\n  warm: {window: 50}\n"
			s := startProxy(t, c.yaml(settings, 0, 1))
			before := s.testPool("p").place.Load().sig
			reload(t, s, c.yaml(settings, 0, 1, 2))
			p := s.testPool("p")
			eventually(t, "the window to close", func() bool { return p.place.Load().mig == nil })
			if p.place.Load().sig == before {
				t.Fatal("the placement did not change: the test would not test a pool after a change")
			}
			requestAllocations(t, s.Addr("p").String(), mcAllocCases)
		}},
		{"memcached", "traffic sample", sample, 2, mcCases},
		{"memcached", "hot key cached", sample + "  hot_keys: {enabled: true, staleness: 60000}\n", 1, func(t *testing.T, s *Server) {
			c := dial(t, s.Addr("p").String())
			setValue(c, "hot", "hello", 0, 0)
			hotAllocations(t, s, func() { getValue(c, "hot") }, allocCase{"get of a cached key", "get hot\r\n", "VALUE hot 0 5\r\nhello\r\nEND\r\n", 0.1})
		}},
		{"redis", "plain", "  hash_tag: \"{}\"\n", 2, func(t *testing.T, s *Server) {
			a, b := keysApart(t, s.testPool("p"))
			requestAllocations(t, s.Addr("p").String(), []allocCase{
				{"SET", bulks("SET", a, "hello"), "+OK\r\n", 0.1},
				{"GET", bulks("GET", a), "$5\r\nhello\r\n", 0.1},
				{"MGET over two servers", bulks("MGET", a, b, a), "*3\r\n$5\r\nhello\r\n$-1\r\n$5\r\nhello\r\n", 0.1},
				{"DEL over two servers", bulks("DEL", b, b+"x", b+"y", "zz"), ":0\r\n", 0.1},
				{"SINTER same server", bulks("SINTER", "{t}a", "{t}b"), "*0\r\n", 0.1},
				{"PING", bulks("PING"), "+PONG\r\n", 0.1},
			})
		}},
		{"redis", "traffic sample", sample, 2, func(t *testing.T, s *Server) {
			a, b := keysApart(t, s.testPool("p"))
			requestAllocations(t, s.Addr("p").String(), []allocCase{
				{"SET", bulks("SET", a, "hello"), "+OK\r\n", 0.1},
				{"GET", bulks("GET", a), "$5\r\nhello\r\n", 0.1},
				{"MGET over two servers", bulks("MGET", a, b), "*2\r\n$5\r\nhello\r\n$-1\r\n", 0.1},
			})
		}},
		{"redis", "hot key cached", sample + "  hot_keys: {enabled: true}\n", 1, func(t *testing.T, s *Server) {
			c := dialRedis(t, s.Addr("p").String())
			c.do("SET", "hot", "hello")
			hotAllocations(t, s, func() { c.do("GET", "hot") }, allocCase{"GET of a cached key", bulks("GET", "hot"), "$5\r\nhello\r\n", 0.1})
		}},
	}
	for _, row := range rows {
		t.Run(row.proto+"/"+row.name, func(t *testing.T) {
			var y string
			if row.proto == "redis" {
				for _, r := range rs {
					if got := dialRedis(t, r.addr).do("FLUSHALL"); got != "+OK\r\n" {
						t.Fatalf("FLUSHALL: %q", got)
					}
				}
				y = redisPoolYAML(row.settings, rs[:row.servers]...)
			} else {
				for _, m := range c.ms {
					dialDirect(t, m).flush()
				}
				y = poolYAML(row.settings, c.ms[:row.servers]...)
			}
			if row.servers == 0 { // the row starts its own proxy
				row.run(t, nil)
				return
			}
			row.run(t, startProxy(t, y))
		})
	}
}

// hotAllocations asks for the hot key with get until the pool's hot-key
// cache answers it, then counts the allocations of hot's requests, and
// fails unless the cache answered every one of them.
func hotAllocations(t *testing.T, s *Server, get func(), hot allocCase) {
	p := s.testPool("p")
	eventually(t, "the cache to answer the hot key", func() bool {
		get()
		return p.hot.hits.Load() > 0
	})
	hits, misses := p.hot.hits.Load(), p.hot.misses.Load()
	requestAllocations(t, s.Addr("p").String(), []allocCase{hot})
	if n := p.hot.misses.Load() - misses; n != 0 || p.hot.hits.Load()-hits < 2200 {
		t.Errorf("%d of the requests measured went to the server, %d were answered by the cache", n, p.hot.hits.Load()-hits)
	}
}

// requestAllocations sends each case's request on one connection to
// addr, in turn, and fails for a case that costs more allocations per
// request than its max.
func requestAllocations(t *testing.T, addr string, cases []allocCase) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	for _, tc := range cases {
		req, buf := []byte(tc.req), make([]byte, len(tc.reply))
		do := func(n int) {
			for range n {
				if _, err := conn.Write(req); err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadFull(conn, buf); err != nil {
					t.Fatal(err)
				}
				if string(buf) != tc.reply {
					t.Fatalf("%s: %q", tc.name, buf)
				}
			}
		}
		do(200) // warm up: pools, buffers, connections
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		const n = 2000
		do(n)
		runtime.ReadMemStats(&after)
		per := float64(after.Mallocs-before.Mallocs) / n
		t.Logf("%s: %.3f allocations per request", tc.name, per)
		if per > tc.max {
			t.Errorf("%s: %.3f allocations per request, want at most %v", tc.name, per, tc.max)
		}
	}
}

// bulks returns a request of args as an array of bulk strings.
func bulks(args ...string) string {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	return string(redisArgs(b))
}
