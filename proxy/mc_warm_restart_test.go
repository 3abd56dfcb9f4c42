package proxy

import (
	"context"
	"fmt"
	"os"
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
// k read from its first server, the value from before the add. Open: the
// fix (the window's placements handed to the new process, or a sweep
// before the next change may give keys back) is a design choice;
// KOLCO_FAULTS_OPEN=1 runs it.
func TestWarmRestartLeavesNoOldCopy(t *testing.T) {
	if os.Getenv("KOLCO_FAULTS_OPEN") != "1" {
		t.Skip("open fault: a change after a restart in a window gives keys back to an old copy (KOLCO_FAULTS_OPEN=1 runs it)")
	}
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
