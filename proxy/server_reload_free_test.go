package proxy

import (
	"runtime"
	"testing"
	"weak"
)

// TestReplacedPoolsAreFreed: the pools reloads replace are freed once they
// have answered their requests in flight and a warm change's window has
// closed (a window holds the pool it follows), however many reloads follow,
// rather than each pool holding the one before it (by the placement it
// replaced, or a store's wait for its predecessor) and so every pool the
// process ever served: a proxy that follows a membership source reloads
// for as long as it runs.
func TestReplacedPoolsAreFreed(t *testing.T) {
	for _, kind := range []string{"memcached", "store"} {
		t.Run(kind, func(t *testing.T) {
			var yaml func(i int) string
			if kind == "memcached" {
				c := startCluster(t, 3)
				yaml = func(i int) string {
					return c.yaml("  distribution: ring\n  warm: {window: 100}\n", []int{0, 1, 2}[:2+i%2]...)
				}
			} else {
				rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
				yaml = func(i int) string { return storeYAML("ring", rs[:2+i%2], "") }
			}
			s := startProxy(t, yaml(0))
			var replaced []weak.Pointer[pool]
			for i := range 3 {
				replaced = append(replaced, weak.Make(s.testPool("p")))
				reload(t, s, yaml(i+1))
			}
			eventually(t, "the replaced pools to be freed", func() bool {
				runtime.GC()
				for _, w := range replaced {
					if w.Value() != nil {
						return false
					}
				}
				return true
			})
		})
	}
}
