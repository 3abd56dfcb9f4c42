//go:build linux && !race && !msan && !asan

package proxy

import "testing"

// TestHotKeysRedisRequestAllocations: a GET the hot-key cache answers -
// the read waiting for its server's PING, then answered from the value -
// allocates nothing in steady state, as a GET the server answers does
// (TestRequestAllocations); the GETs measured are all the cache's hits.
func TestHotKeysRedisRequestAllocations(t *testing.T) {
	r := startRedis(t, 0)
	s := startProxy(t, redisPoolYAML("  traffic: {enabled: true, requests: 64, top_keys: 8}\n  hot_keys: {enabled: true}\n", r))
	c := dialRedis(t, s.Addr("p").String())
	c.do("SET", "hot", "hello")
	p := s.testPool("p")
	eventually(t, "the cache to answer the hot key", func() bool {
		c.do("GET", "hot")
		return p.hot.hits.Load() > 0
	})
	hits, misses := p.hot.hits.Load(), p.hot.misses.Load()
	requestAllocations(t, s.Addr("p").String(), []allocCase{
		{"GET of a cached key", bulks("GET", "hot"), "$5\r\nhello\r\n", 0.1},
	})
	if n := p.hot.misses.Load() - misses; n != 0 || p.hot.hits.Load()-hits < 2200 {
		t.Errorf("%d of the GETs measured went to the server, %d were answered by the cache", n, p.hot.hits.Load()-hits)
	}
}
