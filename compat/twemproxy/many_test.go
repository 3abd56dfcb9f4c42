package twemproxy_test

import (
	"cmp"
	"fmt"
	"strconv"
	"testing"

	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// TestNutcrackerManyServers checks a 25-server ketama pool, where float32
// rounding gives every server of equal weight 156 points instead of 160,
// and a 40-server modula pool of unequal weights. The servers are named and share 5 memcached backends
// (server i uses backend i % 5), so the backend holding a key tells the
// server modulo 5.
func TestNutcrackerManyServers(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	mc := lookPathOrSkip(t, "memcached", "memcached")
	nc := lookPathOrSkip(t, "nutcracker", "nutcracker")
	ports := make([]int, 5)
	for i := range ports {
		ports[i] = freePort(t)
		start(t, ports[i], mc, memcachedArgs(ports[i])...)
	}
	for ci, c := range []struct {
		cfg      twemproxy.Config
		n        int
		weighted bool
	}{{twemproxy.Config{}, 25, false}, {twemproxy.Config{Distribution: "modula", Hash: "crc32a"}, 40, true}} {
		t.Run(fmt.Sprintf("%d servers, %s", c.n, cmp.Or(c.cfg.Distribution, "ketama")), func(t *testing.T) {
			servers := make([]twemproxy.Server, c.n)
			lines := make([]string, c.n)
			for i := range servers {
				servers[i] = twemproxy.Server{Host: "127.0.0.1", Port: ports[i%5], Weight: 1, Name: fmt.Sprintf("node-%02d", i)}
				if c.weighted {
					servers[i].Weight += i % 3
				}
				lines[i] = servers[i].String()
			}
			keys := memcacheKeys(uint64(300+ci), 3000, false)
			value := "m" + strconv.Itoa(ci)
			runNutcracker(t, nc, c.cfg, lines, keys, value)
			pool, err := twemproxy.New(c.cfg, servers)
			if err != nil {
				t.Fatal(err)
			}
			owner := make([]int, len(keys))
			for i := range owner {
				owner[i] = -1
			}
			for b, port := range ports {
				found, err := dialMC(t, port).getAll(keys, value)
				if err != nil {
					t.Fatal(err)
				}
				for i, ok := range found {
					if ok {
						owner[i] = b
					}
				}
			}
			mismatches := 0
			for i, k := range keys {
				if got := pool.Index(k) % 5; got != owner[i] {
					if mismatches++; mismatches <= 5 {
						t.Errorf("key %q on backend %d, Index names a server of backend %d", k, owner[i], got)
					}
				}
			}
			if mismatches > 0 {
				t.Errorf("%d of %d keys mismatched", mismatches, len(keys))
			}
		})
	}
}
