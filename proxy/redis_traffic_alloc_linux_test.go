//go:build linux && !race && !msan && !asan

package proxy

import "testing"

// TestSampleRedisRequestAllocations: with the traffic sample on, a Redis
// GET, SET and MGET over two servers allocate nothing in steady state, as
// without it (TestRequestAllocations).
func TestSampleRedisRequestAllocations(t *testing.T) {
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0)}
	s := startProxy(t, redisPoolYAML("  traffic: {enabled: true, requests: 64, top_keys: 8}\n", rs...))
	a, b := keysApart(t, s.testPool("p"))
	requestAllocations(t, s.Addr("p").String(), []allocCase{
		{"SET", bulks("SET", a, "hello"), "+OK\r\n", 0.1},
		{"GET", bulks("GET", a), "$5\r\nhello\r\n", 0.1},
		{"MGET over two servers", bulks("MGET", a, b), "*2\r\n$5\r\nhello\r\n$-1\r\n", 0.1},
	})
}
