package proxy

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

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
// sweeps it first (see pool.presweep).
func TestWarmRestartLeavesNoOldCopy(t *testing.T) {
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
