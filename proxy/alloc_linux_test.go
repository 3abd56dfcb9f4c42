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

// TestRequestAllocations counts the proxy's heap allocations per request
// in steady state, on one client connection, for each protocol's
// commands: memcached's get, set and a two-server multi-get with one copy
// of each key (ketama), with two (ring), and once a change's migration
// window has closed, when a request costs what it cost before any change;
// Redis's GET, SET, an MGET split over two servers, a DEL of keys on
// both, a same-server command and a PING answered by the proxy. The
// test's own client allocates nothing per request. (Race and sanitizer
// builds read sockets through net.Conn and instrument allocations, so the
// count there means nothing.)
func TestRequestAllocations(t *testing.T) {
	mcCases := mcAllocCases
	t.Run("memcached", func(t *testing.T) {
		ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
		for _, pool := range []struct{ name, yaml string }{
			{"one copy", ""}, {"two copies", "  distribution: ring\n  replicas: 2\n"},
		} {
			t.Run(pool.name, func(t *testing.T) {
				requestAllocations(t, startProxy(t, poolYAML(pool.yaml, ms...)).Addr("p").String(), mcCases)
			})
		}
	})
	t.Run("memcached after a change", func(t *testing.T) {
		c := startCluster(t, 3)
		settings := "  distribution: ring\n  warm: {window: 50}\n"
		s := startProxy(t, c.yaml(settings, 0, 1))
		before := s.testPool("p").place.Load().sig
		reload(t, s, c.yaml(settings, 0, 1, 2))
		p := s.testPool("p")
		eventually(t, "the window to close", func() bool { return p.place.Load().mig == nil })
		if p.place.Load().sig == before {
			t.Fatal("the placement did not change: the test would not test a pool after a change")
		}
		requestAllocations(t, s.Addr("p").String(), mcCases)
	})
	t.Run("redis", func(t *testing.T) {
		rs := []*redisServer{startRedis(t, 0), startRedis(t, 0)}
		s := startProxy(t, redisPoolYAML("  hash_tag: \"{}\"\n", rs...))
		a, b := keysApart(t, s.testPool("p"))
		requestAllocations(t, s.Addr("p").String(), []allocCase{
			{"SET", bulks("SET", a, "hello"), "+OK\r\n", 0.1},
			{"GET", bulks("GET", a), "$5\r\nhello\r\n", 0.1},
			{"MGET over two servers", bulks("MGET", a, b, a), "*3\r\n$5\r\nhello\r\n$-1\r\n$5\r\nhello\r\n", 0.1},
			{"DEL over two servers", bulks("DEL", b, b+"x", b+"y", "zz"), ":0\r\n", 0.1},
			{"SINTER same server", bulks("SINTER", "{t}a", "{t}b"), "*0\r\n", 0.1},
			{"PING", bulks("PING"), "+PONG\r\n", 0.1},
		})
	})
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
