//go:build linux && !race && !msan && !asan

package proxy

import (
	"io"
	"net"
	"runtime"
	"testing"
	"time"
)

// TestRedisRequestAllocations counts the proxy's heap allocations per
// request in steady state on one client connection of a Redis pool over
// two servers: a GET, a SET, an MGET split over both servers, a DEL of
// keys on both, a same-server command and a PING answered by the proxy.
// The test's own client allocates nothing per request. (Race and
// sanitizer builds read sockets through net.Conn and instrument
// allocations, so the count there means nothing.)
func TestRedisRequestAllocations(t *testing.T) {
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0)}
	s := startProxy(t, redisPoolYAML("  hash_tag: \"{}\"\n", rs...))
	conn, err := net.Dial("tcp", s.Addr("p").String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	p := s.testPool("p")
	a, b := keysApart(t, p)
	for _, tc := range []struct{ name, req, reply string }{
		{"SET", bulks("SET", a, "hello"), "+OK\r\n"},
		{"GET", bulks("GET", a), "$5\r\nhello\r\n"},
		{"MGET over two servers", bulks("MGET", a, b, a), "*3\r\n$5\r\nhello\r\n$-1\r\n$5\r\nhello\r\n"},
		{"DEL over two servers", bulks("DEL", b, b+"x", b+"y", "zz"), ":0\r\n"},
		{"SINTER same server", bulks("SINTER", "{t}a", "{t}b"), "*0\r\n"},
		{"PING", bulks("PING"), "+PONG\r\n"},
	} {
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
		if per > 0.1 {
			t.Errorf("%s: %.3f allocations per request, want at most 0.1", tc.name, per)
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
