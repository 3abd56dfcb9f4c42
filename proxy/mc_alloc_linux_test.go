//go:build linux && !race && !msan && !asan

package proxy

import (
	"io"
	"net"
	"runtime"
	"testing"
	"time"
)

// TestRequestAllocations counts the proxy's heap allocations per request in
// steady state, for a get, a set and a two-server multi-get on one client
// connection, with one copy of each key (ketama) and with two (ring); the
// test's own client allocates nothing per request. (Race and sanitizer
// builds read sockets through net.Conn and instrument allocations, so the
// count there means nothing.)
func TestRequestAllocations(t *testing.T) {
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
	for _, pool := range []string{"", "  distribution: ring\n  replicas: 2\n"} {
		s := startProxy(t, poolYAML(pool, ms...))
		requestAllocations(t, s.Addr("p").String(), pool != "")
	}
}

// TestRequestAllocationsAfterChange: once a change's migration window has
// closed, a request costs what it cost before any change.
func TestRequestAllocationsAfterChange(t *testing.T) {
	c := startCluster(t, 3)
	settings := "  distribution: ring\n  warm: {window: 50}\n"
	s := startProxy(t, c.yaml(settings, 0, 1))
	reload(t, s, c.yaml(settings, 0, 1, 2))
	p := s.testPool("p")
	eventually(t, "the window to close", func() bool { return p.place.Load().mig == nil })
	if p.place.Load().prev == nil {
		t.Fatal("no previous placement: the test would not test a pool after a change")
	}
	requestAllocations(t, s.Addr("p").String(), false)
}

func requestAllocations(t *testing.T, addr string, replicas bool) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	for _, tc := range []struct {
		name, req, reply string
		max              float64
	}{
		{"set", "set a 0 0 5\r\nhello\r\n", "STORED\r\n", 0.1},
		{"get", "get a\r\n", "VALUE a 0 5\r\nhello\r\nEND\r\n", 0.1},
		{"multi-get", "get a b c d e f\r\n", "VALUE a 0 5\r\nhello\r\nEND\r\n", 0.1},
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
		if replicas {
			tc.name += ", two copies"
		}
		t.Logf("%s: %.3f allocations per request", tc.name, per)
		if per > tc.max {
			t.Errorf("%s: %.3f allocations per request, want at most %v", tc.name, per, tc.max)
		}
	}
}
