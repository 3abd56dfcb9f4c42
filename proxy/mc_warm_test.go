package proxy

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

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
	t.Parallel()
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

// TestWarmRestartLeavesNoOldCopy: a proxy restarted (or handed over) in
// a change's window forgets the window; the next change must not give a
// key back to the server it moved from while that server still holds the
// value from before the first change. A fault schedule (seed 124:
// memcached, modula with warm changes and every server swept, gossip,
// two proxies; a server added, a handover, two removed) read 3 values
// older than writes acknowledged before: the copies the first change left
// were to be swept after the next change, whose window opened at once
// with them in it. Here: modula over m0..m2, m3 added, the proxy started
// again, k written (to its new server alone: no window), m3 removed - and
// k must not read its first server's value from before the add: the change
// sweeps it first (see mcSweep.presweep).
func TestWarmRestartLeavesNoOldCopy(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	yaml := func(n int) string {
		var b strings.Builder
		b.WriteString("kolco:\n  admin_listen: 127.0.0.1:0\np:\n  listen: 127.0.0.1:0\n  distribution: modula\n  hash: fnv1a_64\n" +
			"  timeout: 10000\n  warm: {enabled: true}\n  sweep: {exclusive: [\"*\"]}\n  servers:\n")
		for i := range n {
			fmt.Fprintf(&b, "   - %s:1 m%d\n", ms[i].addr, i)
		}
		return b.String()
	}
	reload := func(s *Server, n int) {
		t.Helper()
		cfg, err := ParseConfig([]byte(yaml(n)))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Reload(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
	}
	owner := func(s *Server, k string) string {
		var locs []Location
		adminGet(t, s, "/v1/pools/p/locate?key="+urlKey(k), "", &locs)
		return locs[0].Servers[0].Name
	}
	s := startProxy(t, yaml(3))
	var k, first string
	for _, key := range diffKeys(100) {
		if got := dial(t, s.Addr("p").String()).do("set " + key + " 0 0 3\r\nold\r\n"); got != "STORED\r\n" {
			t.Fatalf("set %q: %q", key, got)
		}
		if k == "" {
			k, first = key, owner(s, key)
		}
	}
	reload(s, 4) // m3 added: modula moves most keys
	if owner(s, k) == first {
		t.Fatalf("%q stays on %s when m3 is added; the test wants a key that moves", k, first)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	s = startProxy(t, yaml(4)) // started again: no window
	c := dial(t, s.Addr("p").String())
	if got := c.do("set " + k + " 0 0 3\r\nnew\r\n"); got != "STORED\r\n" {
		t.Fatalf("set %q: %q", k, got)
	}
	reload(s, 3) // m3 removed: k goes back to its first server
	if got := c.do("get " + k + "\r\n"); got != "VALUE "+k+" 0 3\r\nnew\r\nEND\r\n" {
		t.Errorf("get %q after the restart and the change back: %q, want the value written after the restart", k, got)
	}
}

// TestChangeBeforeSweepLeavesNoOldCopy: a change that comes after a
// window has closed and before its sweep is done (the sweep deletes one
// orphan a second here) gives a key back to the server holding its copy
// from before the first change; the change sweeps that server of such
// keys first, so the key reads the value written after the window.
func TestChangeBeforeSweepLeavesNoOldCopy(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 4)
	settings := "  distribution: modula\n  hash: fnv1a_64\n  warm: {enabled: true, window: 200}\n" +
		"  sweep: {exclusive: [\"*\"], rate: 1}\n"
	s := startProxy(t, c.yaml(settings, 0, 1, 2))
	cl := dial(t, s.Addr("p").String())
	keys := spreadKeys("presweep", 100)
	for _, k := range keys {
		setValue(cl, k, "old", 0, 0)
	}
	before := routeNames(s.testPool("p"), keys)
	reload(t, s, c.yaml(settings, 0, 1, 2, 3))
	var moved []string
	for i, owner := range routeNames(s.testPool("p"), keys) {
		if owner != before[i] {
			moved = append(moved, keys[i])
		}
	}
	if len(moved) < 10 {
		t.Fatalf("%d of %d keys moved: too few", len(moved), len(keys))
	}
	eventually(t, "the window closed", func() bool {
		m := s.testPool("p").place.Load().mig
		return m == nil || !m.open()
	})
	for _, k := range moved {
		setValue(cl, k, "new", 0, 0) // after the window: no old copy is deleted
	}
	reload(t, s, c.yaml(settings, 0, 1, 2))
	stale := 0
	for _, k := range moved {
		if getValue(cl, k) == "old" {
			stale++
		}
	}
	if stale > 0 {
		t.Errorf("%d of %d keys moved and back read the value from before the first change", stale, len(moved))
	}
}
