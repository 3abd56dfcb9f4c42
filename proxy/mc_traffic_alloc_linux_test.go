//go:build linux && !race && !msan && !asan

package proxy

import "testing"

// TestSampleRequestAllocations: with the traffic sample on, a get, a set
// and a multi-get allocate no more than without it (TestRequestAllocations),
// the trace's slots and the hot-key summaries made when the pool is.
func TestSampleRequestAllocations(t *testing.T) {
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
	s := startProxy(t, poolYAML("  traffic: {enabled: true, requests: 64, top_keys: 8}\n", ms...))
	requestAllocations(t, s.Addr("p").String(), mcAllocCases)
}
