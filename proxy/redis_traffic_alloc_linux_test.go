//go:build linux && !race && !msan && !asan

package proxy

import (
	"io"
	"net"
	"runtime"
	"testing"
	"time"
)

// TestSampleRedisRequestAllocations: with the traffic sample on, a Redis
// GET, SET and MGET over two servers allocate nothing in steady state, as
// without it (TestRedisRequestAllocations).
func TestSampleRedisRequestAllocations(t *testing.T) {
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0)}
	s := startProxy(t, redisPoolYAML("  traffic: {enabled: true, requests: 64, top_keys: 8}\n", rs...))
	conn, err := net.Dial("tcp", s.Addr("p").String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	a, b := keysApart(t, s.testPool("p"))
	for _, tc := range []struct{ name, req, reply string }{
		{"SET", bulks("SET", a, "hello"), "+OK\r\n"},
		{"GET", bulks("GET", a), "$5\r\nhello\r\n"},
		{"MGET over two servers", bulks("MGET", a, b), "*2\r\n$5\r\nhello\r\n$-1\r\n"},
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
		do(200)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		const n = 2000
		do(n)
		runtime.ReadMemStats(&after)
		if per := float64(after.Mallocs-before.Mallocs) / n; per > 0.1 {
			t.Errorf("%s: %.3f allocations per request, want at most 0.1", tc.name, per)
		}
	}
}
