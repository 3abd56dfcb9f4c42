//go:build !purego

package proxy

import (
	"testing"

	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/compat/twemproxy"
)

func TestKolcoPlacementDoesNotAllocate(t *testing.T) {
	cfg := &PoolConfig{Servers: []twemproxy.Server{{Host: "127.0.0.1", Port: 11211, Weight: 1}, {Host: "127.0.0.1", Port: 11212, Weight: 1}}}
	for _, dist := range algo.Names() {
		cfg.Distribution = dist
		p, err := newPicker(cfg, cfg.nodes())
		if err != nil {
			t.Fatal(err)
		}
		key := []byte("user:12345")
		if n := testing.AllocsPerRun(100, func() { _ = p.Index(key) }); n != 0 {
			t.Errorf("%s: %v allocations per lookup", dist, n)
		}
	}
}

// TestStandInDoesNotAllocate: routing a key whose server is marked down
// to the server standing in for it allocates nothing, once the request's
// scratch space has grown.
func TestStandInDoesNotAllocate(t *testing.T) {
	for _, dist := range algo.Names() {
		cfg, err := ParseConfig([]byte(placementYAML("  distribution: "+dist+"\n  auto_eject_hosts: true\n",
			fakeServers(20200, "m0", "m1", "m2", "m3", "m4", "m5"))))
		if err != nil {
			t.Fatal(err)
		}
		p, err := testPool(cfg.Pools["p"])
		if err != nil {
			t.Fatal(err)
		}
		pl := p.place.Load()
		for _, i := range []int{1, 2, 4} {
			p.backends[i].health.down.Store(true)
		}
		var sc routeScratch
		var key []byte
		for i := 0; key == nil; i++ {
			if k := []byte(testKeys("alloc", i+1)[i]); pl.servers[pl.pick.Index(k)].health.isDown() {
				key = k
			}
		}
		if n := testing.AllocsPerRun(100, func() { _ = pl.route(key, false, &sc) }); n != 0 {
			t.Errorf("%s: %v allocations per lookup of a key whose server is down", dist, n)
		}
		if o := pl.route(key, false, &sc); len(o) != 1 || o[0].health.isDown() {
			t.Errorf("%s: routed to %v", dist, o)
		}
	}
}
