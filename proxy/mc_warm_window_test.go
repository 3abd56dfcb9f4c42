package proxy

import (
	"fmt"
	"testing"
)

// gaugeOf returns the value of the pool's series of the named gauge.
func gaugeOf(t *testing.T, s *Server, name, pool string) float64 {
	t.Helper()
	fams, err := s.met.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "pool" && l.GetValue() == pool {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s for pool %s", name, pool)
	return 0
}

// TestWarmWindowEnds: a window ends when fallbacks stop finding data
// (warm.quiet in a row found nothing) and when its time is up; the
// metrics show it open, then closed with the reason.
func TestWarmWindowEnds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, settings, reason string
	}{
		{"quiet", "  distribution: ring\n  warm: {window: 600000, quiet: 25}\n", "quiet"},
		{"time", "  distribution: ring\n  warm: {window: 200}\n", "time"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := startCluster(t, 4)
			s := startProxy(t, cl.yaml(c.settings, 0, 1, 2))
			if gaugeOf(t, s, "kolco_proxy_warm_window_open", "p") != 0 {
				t.Fatal("a window is open before any change")
			}
			reload(t, s, cl.yaml(c.settings, 0, 1, 2, 3))
			p := s.testPool("p")
			if c.reason == "quiet" {
				if gaugeOf(t, s, "kolco_proxy_warm_window_open", "p") != 1 || gaugeOf(t, s, "kolco_proxy_warm_window_placements", "p") != 1 {
					t.Fatal("the window's metrics do not show it open over one previous placement")
				}
				// Keys nobody wrote: each one the change moved is looked up
				// at its previous server and not found.
				client := dial(t, s.Addr("p").String())
				keys := testKeys("absent", 400)
				was := routeNames(p, keys)
				for i, k := range keys {
					if getValue(client, k) != "" {
						t.Fatalf("%s, never written, reads a value", k)
					}
					if was[i] == "m3" && p.mig.stats.fallbacks.Load() >= 25 {
						break
					}
				}
			}
			eventually(t, "the window to close", func() bool { return p.place.Load().mig == nil })
			if gaugeOf(t, s, "kolco_proxy_warm_window_open", "p") != 0 {
				t.Error("the window's metric shows it open after it closed")
			}
			if n := gathered(t, s, "kolco_proxy_warm_windows_closed_total", c.reason); n != 1 {
				t.Errorf("%v windows closed for %s", n, c.reason)
			}
			if n := gathered(t, s, "kolco_proxy_warm_windows_total", "p"); n != 1 {
				t.Errorf("%v windows opened", n)
			}
		})
	}
}

// TestWarmChainedChanges: a second change within the window of the first
// falls back through both previous placements with warm.depth 2, and
// only through the newer one with depth 1: then a key the first change
// moved, not read in between, misses unless the second moved it back.
func TestWarmChainedChanges(t *testing.T) {
	t.Parallel()
	for _, depth := range []int{1, 2} {
		t.Run(fmt.Sprintf("depth %d", depth), func(t *testing.T) {
			c := startCluster(t, 5)
			settings := fmt.Sprintf("  distribution: rendezvous\n  warm: {depth: %d}\n", depth)
			s := startProxy(t, c.yaml(settings, 0, 1, 2))
			cl := dial(t, s.Addr("p").String())
			keys := testKeys("chain", 1500)
			for _, k := range keys {
				setValue(cl, k, "v-"+k, 0, 0)
			}
			first := routeNames(s.testPool("p"), keys)
			reload(t, s, c.yaml(settings, 0, 1, 2, 3))
			second := routeNames(s.testPool("p"), keys)
			reload(t, s, c.yaml(settings, 0, 1, 2, 3, 4))
			third := routeNames(s.testPool("p"), keys)
			twice, beyond, misses := 0, 0, 0
			for i, k := range keys {
				if first[i] != second[i] && second[i] != third[i] {
					twice++
				}
				// Only the first placement's server holds the value.
				onlyFirst := first[i] != second[i] && third[i] != first[i]
				if onlyFirst {
					beyond++
				}
				switch got := getValue(cl, k); {
				case got == "":
					misses++
					if depth == 2 || !onlyFirst {
						t.Fatalf("depth %d: %s (on %s, %s, %s) misses", depth, k, first[i], second[i], third[i])
					}
				case got != "v-"+k:
					t.Fatalf("%s reads %q", k, got)
				case depth == 1 && onlyFirst:
					t.Fatalf("depth 1: %s (on %s, %s, %s) found beyond one placement back", k, first[i], second[i], third[i])
				}
			}
			if twice == 0 || beyond == 0 {
				t.Fatalf("%d keys moved twice, %d held only two placements back: the test would not test a chain", twice, beyond)
			}
			t.Logf("depth %d: %d keys moved twice, %d held only two placements back, %d missed", depth, twice, beyond, misses)
		})
	}
}

// TestLocateShowsPreviousServer: while a window is open the admin
// endpoint's location of a key the change moved names the server a miss
// falls back to, the one the key lived on; a key that stayed, and every
// key once the window has closed, names none.
func TestLocateShowsPreviousServer(t *testing.T) {
	c := startCluster(t, 4)
	settings := "  distribution: ring\n  warm: {window: 600000, quiet: 1}\n"
	s := startProxy(t, c.yaml(settings, 0, 1, 2))
	keys := testKeys("loc", 200)
	was := routeNames(s.testPool("p"), keys)
	reload(t, s, c.yaml(settings, 0, 1, 2, 3))
	p := s.testPool("p")
	now := routeNames(p, keys)
	moved := -1
	for i, k := range keys {
		loc := p.locate(k)
		switch {
		case was[i] == now[i] && len(loc.Previous) != 0:
			t.Fatalf("%s stayed on %s, yet its location names %v", k, now[i], loc.Previous)
		case was[i] != now[i] && (len(loc.Previous) != 1 || loc.Previous[0].Name != was[i]):
			t.Fatalf("%s moved from %s to %s; its location names %v", k, was[i], now[i], loc.Previous)
		case was[i] != now[i]:
			moved = i
		}
	}
	if moved < 0 {
		t.Fatal("no key moved")
	}
	// A key nobody wrote: its fallback finds nothing, and with quiet 1
	// that ends the window.
	if got := getValue(dial(t, s.Addr("p").String()), keys[moved]); got != "" {
		t.Fatalf("%s, never written, reads %q", keys[moved], got)
	}
	eventually(t, "the window to close", func() bool { return p.place.Load().mig == nil })
	if loc := p.locate(keys[moved]); len(loc.Previous) != 0 {
		t.Fatalf("after the window %s's location names %v", keys[moved], loc.Previous)
	}
}
