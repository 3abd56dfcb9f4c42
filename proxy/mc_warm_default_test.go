package proxy

import "testing"

// TestTwemproxyPoolsStayCold: a ketama pool applies a change as
// nutcracker does unless warm changes are asked for: a moved key misses
// at its new server, and nothing is read from its previous one.
func TestTwemproxyPoolsStayCold(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 4)
	s := startProxy(t, c.yaml("", 0, 1, 2))
	cl := dial(t, s.Addr("p").String())
	keys := testKeys("cold", 400)
	for _, k := range keys {
		setValue(cl, k, "v", 0, 0)
	}
	was := routeNames(s.testPool("p"), keys)
	reload(t, s, c.yaml("", 0, 1, 2, 3))
	p := s.testPool("p")
	if p.place.Load().mig != nil {
		t.Fatal("a ketama pool started a migration without warm changes or a sweep")
	}
	moved := 0
	for i, k := range routeNames(p, keys) {
		got := getValue(cl, keys[i])
		if k != was[i] {
			moved++
			if got != "" {
				t.Fatalf("%s moved and reads %q: not as nutcracker", keys[i], got)
			}
		} else if got != "v" {
			t.Fatalf("%s stayed and reads %q", keys[i], got)
		}
	}
	if moved == 0 || p.mig.stats.fallbacks.Load() != 0 {
		t.Fatalf("%d keys moved, %d fallbacks", moved, p.mig.stats.fallbacks.Load())
	}
}
