package proxy

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// fakeServers returns server lines for the names, each on a loopback port
// nobody listens on (port base+i for name i), for tests of placement that
// send no request.
func fakeServers(base int, names ...string) []string {
	lines := make([]string, len(names))
	for i, n := range names {
		lines[i] = fmt.Sprintf("127.0.0.1:%d:1 %s", base+i, n)
	}
	return lines
}

// placementYAML returns a one-pool configuration with the settings extra
// over the server lines, probing down servers too rarely to matter.
func placementYAML(extra string, servers []string) string {
	var b strings.Builder
	b.WriteString("p:\n  listen: 127.0.0.1:0\n  health_check: {interval: 600000}\n")
	b.WriteString(extra)
	b.WriteString("  servers:\n")
	for _, s := range servers {
		fmt.Fprintf(&b, "   - %s\n", s)
	}
	return b.String()
}

// reload applies yaml to s.
func reload(t testing.TB, s *Server, yaml string) {
	t.Helper()
	cfg, err := ParseConfig([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
}

// routeNames returns the name of the server each key is routed to.
func routeNames(p *pool, keys []string) []string {
	pl := p.place.Load()
	out := make([]string, len(keys))
	var sc routeScratch
	for i, k := range keys {
		if o := pl.route([]byte(k), false, &sc); len(o) > 0 {
			out[i] = o[0].name()
		}
	}
	return out
}

// TestReloadAppliesChange: a reload that removes a server and adds one is
// applied to the running placement as a change, for every kolco
// distribution: the pool places every key as the algorithm does after
// Mutable.Apply of the same change, so that a history-dependent one
// keeps every key of the servers that stay where it was, where a
// placement built afresh would move some.
func TestReloadAppliesChange(t *testing.T) {
	keys := testKeys("reload", 3000)
	for _, name := range algo.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			before := fakeServers(20000, "m0", "m1", "m2", "m3", "m4", "m5")
			after := append(append([]string(nil), before[:2]...), before[3:]...)
			after = append(after, fakeServers(20006, "m6")...)
			setting := "  distribution: " + name + "\n"
			s := startProxy(t, placementYAML(setting, before))
			was := routeNames(s.testPool("p"), keys)
			reload(t, s, placementYAML(setting, after))
			got := routeNames(s.testPool("p"), keys)

			model, fresh := placeAfter(t, name, before, after), placeAfter(t, name, after, nil)
			movedSurvivors, freshMoves, survivors := 0, 0, 0
			for i, k := range keys {
				if was[i] != "m2" {
					survivors++
				}
				if got[i] != model[i] {
					t.Fatalf("%s on %s; the algorithm after the change places it on %s", k, got[i], model[i])
				}
				if was[i] != "m2" && got[i] != "m6" && was[i] != got[i] {
					movedSurvivors++
				}
				if was[i] != "m2" && fresh[i] != "m6" && was[i] != fresh[i] {
					freshMoves++
				}
			}
			info, _ := algo.Lookup(name)
			if info.HistoryDependent && movedSurvivors > 0 {
				t.Fatalf("%d keys of servers that stayed moved between them", movedSurvivors)
			}
			if info.HistoryDependent && freshMoves == 0 {
				t.Fatal("a placement built afresh moves no key either: the test would not test the change")
			}
			t.Logf("of %d keys of servers that stayed, moved between them: %d after the change, %d in a placement built afresh",
				survivors, movedSurvivors, freshMoves)
		})
	}
}

// TestReloadWithoutPlacementChange: a reload that gives a named server
// another address, and one that changes only a setting other than
// placement, move no key; for kolco's distributions the placement keeps
// its fingerprint, and after the second reload it is the same value.
func TestReloadWithoutPlacementChange(t *testing.T) {
	keys := testKeys("same", 2000)
	for _, name := range append(algo.Names(), "ketama", "modula") {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			servers := fakeServers(20100, "m0", "m1", "m2", "m3")
			setting := "  distribution: " + name + "\n"
			s := startProxy(t, placementYAML(setting, servers))
			was, wasLayout := routeNames(s.testPool("p"), keys), s.testPool("p").place.Load().layout()
			moved := append([]string(nil), servers...)
			moved[2] = "127.0.0.1:20199:1 m2"
			reload(t, s, placementYAML(setting, moved))
			p := s.testPool("p")
			if p.backends[2].addr != "127.0.0.1:20199" {
				t.Fatalf("m2 at %s after the reload", p.backends[2].addr)
			}
			readdressed := p.place.Load().layout()
			reload(t, s, placementYAML(setting+"  max_keys: 100\n", moved))
			if s.testPool("p") == p {
				t.Fatal("the pool was not rebuilt: the test would not test a reload")
			}
			for i, got := range routeNames(s.testPool("p"), keys) {
				if got != was[i] {
					t.Fatalf("%s moved from %s to %s", keys[i], was[i], got)
				}
			}
			if wasLayout == nil {
				return // twemproxy's: no layout
			}
			if readdressed.fingerprint != wasLayout.fingerprint {
				t.Errorf("a new address changed the fingerprint: %s, was %s", readdressed.fingerprint, wasLayout.fingerprint)
			}
			if l := s.testPool("p").place.Load().layout(); l != readdressed {
				t.Error("a reload that changes nothing about placement built a new placement")
			}
		})
	}
}

// placeAfter returns the owner of each of the keys of TestReloadAppliesChange
// under the algorithm built over the servers from and, unless to is nil,
// changed by Mutable.Apply to the servers to.
func placeAfter(t *testing.T, name string, from, to []string) []string {
	cfg := (&PoolConfig{Distribution: name}).WithDefaults()
	opts, err := settingsOf(cfg).options()
	if err != nil {
		t.Fatal(err)
	}
	p, err := algo.New(name, lineNodes(t, cfg, from), opts)
	if err != nil {
		t.Fatal(err)
	}
	if to != nil {
		if err := p.Apply(kolco.Diff(lineNodes(t, cfg, from), lineNodes(t, cfg, to))); err != nil {
			t.Fatal(err)
		}
	}
	keys := testKeys("reload", 3000)
	out := make([]string, len(keys))
	for i, k := range keys {
		if out[i], err = p.LocateID(k); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// lineNodes returns the kolco nodes of server lines in a pool of cfg.
func lineNodes(t testing.TB, cfg *PoolConfig, lines []string) []kolco.Node {
	c := *cfg
	c.Servers = make([]twemproxy.Server, len(lines))
	for i, l := range lines {
		var err error
		if c.Servers[i], err = twemproxy.ParseServer(l); err != nil {
			t.Fatal(err)
		}
	}
	return c.nodes()
}
