package proxy

import "testing"

// TestScaleOutUndoneReturnsKeys: a jump pool over three memcached servers
// that a reload grows to four and the next shrinks back to three routes
// every key to the server it had before, where it still reads, with no
// fallback to another server: a scale-out undone costs its keys nothing.
func TestScaleOutUndoneReturnsKeys(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 4)
	const setting = "  distribution: jump\n"
	s := startProxy(t, c.yaml(setting, 0, 1, 2))
	cl := dial(t, s.Addr("p").String())
	keys := testKeys("undo", 600)
	for _, k := range keys {
		setValue(cl, k, "v-"+k, 0, 0)
	}
	was := routeNames(s.testPool("p"), keys)

	reload(t, s, c.yaml(setting, 0, 1, 2, 3))
	moved := 0
	for i, now := range routeNames(s.testPool("p"), keys) {
		if now != was[i] {
			if now != "m3" {
				t.Fatalf("%s moved from %s to %s, not to the new server", keys[i], was[i], now)
			}
			moved++
		}
	}
	if moved < 60 {
		t.Fatalf("only %d of %d keys moved to the new server: the test would not test much", moved, len(keys))
	}

	reload(t, s, c.yaml(setting, 0, 1, 2))
	p := s.testPool("p")
	back := 0
	for i, now := range routeNames(p, keys) {
		if now != was[i] {
			back++
			if back <= 3 {
				t.Errorf("%s on %s after the undo, was on %s", keys[i], now, was[i])
			}
		}
	}
	if back > 0 {
		t.Fatalf("%d of the %d keys that went to the new server did not return to theirs", back, moved)
	}
	for _, k := range keys {
		if got := getValue(cl, k); got != "v-"+k {
			t.Fatalf("get %s after the undo: %q", k, got)
		}
	}
	if f := p.mig.stats.fallbacks.Load(); f != 0 {
		t.Errorf("%d reads fell back to another server; every key is on its own", f)
	}
	t.Logf("%d of %d keys went to the new server and came back", moved, len(keys))
}
