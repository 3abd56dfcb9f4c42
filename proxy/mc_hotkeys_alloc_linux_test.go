//go:build linux && !race && !msan && !asan

package proxy

import "testing"

// TestHotKeysRequestAllocations: a get the hot-key cache answers
// allocates nothing in steady state, as a get the server answers does
// (TestRequestAllocations); the gets measured are all the cache's hits.
func TestHotKeysRequestAllocations(t *testing.T) {
	m := startMemcached(t, 0)
	s := startProxy(t, poolYAML("  traffic: {enabled: true, requests: 64, top_keys: 8}\n  hot_keys: {enabled: true, staleness: 60000}\n", m))
	c := dial(t, s.Addr("p").String())
	setValue(c, "hot", "hello", 0, 0)
	p := s.testPool("p")
	eventually(t, "the cache to answer the hot key", func() bool {
		getValue(c, "hot")
		return p.hot.hits.Load() > 0
	})
	hits, misses := p.hot.hits.Load(), p.hot.misses.Load()
	requestAllocations(t, s.Addr("p").String(), []allocCase{
		{"get of a cached key", "get hot\r\n", "VALUE hot 0 5\r\nhello\r\nEND\r\n", 0.1},
	})
	if n := p.hot.misses.Load() - misses; n != 0 || p.hot.hits.Load()-hits < 2200 {
		t.Errorf("%d of the gets measured went to the server, %d were answered by the cache", n, p.hot.hits.Load()-hits)
	}
}
