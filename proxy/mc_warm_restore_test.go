package proxy

import (
	"testing"
)

// TestWarmRestoreReadsStandIns: under rehash a server's keys are written
// to the servers standing in for it while it is down; when it is restored,
// what was written meanwhile is copied to it first (settled), so its keys
// read as written without a fallback, and once the window closes the
// stand-ins' copies are gone, so that a second failure cannot serve them.
func TestWarmRestoreReadsStandIns(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 4)
	settings := "  distribution: jump\n  auto_eject_hosts: true\n  server_failure_limit: 1\n" +
		"  warm: {window: 300}\n  sweep: {exclusive: [\"*\"], rate: 100000}\n"
	s := startProxy(t, c.yaml(settings, 0, 1, 2, 3))
	cl := dial(t, s.Addr("p").String())
	keys := testKeys("restore", 1200)
	for _, k := range keys {
		setValue(cl, k, "before", 0, 0)
	}
	p := s.testPool("p")
	owners := routeNames(p, keys)
	down := p.backends[1]
	down.fail(ErrConnLost, 1)
	if !down.health.isDown() {
		t.Fatal("m1 not marked down")
	}
	var theirs []string
	for i, k := range keys {
		if owners[i] == "m1" {
			theirs = append(theirs, k)
			setValue(cl, k, "while-down", 0, 0) // to its stand-in
		}
	}
	if len(theirs) < 100 {
		t.Fatalf("m1 owns %d keys", len(theirs))
	}
	p.restore(down) // settled, then back
	if down.health.isDown() {
		t.Fatal("m1 not restored")
	}
	for _, k := range theirs {
		if got := getValue(cl, k); got != "while-down" {
			t.Fatalf("%s after m1's restore reads %q, want the value written while it was down", k, got)
		}
	}
	if got := down.stats.settled.Load(); got != uint64(len(theirs)) {
		t.Errorf("%d keys settled on m1 for its %d written while it was down", got, len(theirs))
	}
	if got := p.mig.stats.fallbacks.Load(); got != 0 {
		t.Errorf("%d reads fell back to the stand-ins: m1 was settled before it served", got)
	}
	eventually(t, "the window to close and the sweep to end", func() bool { return p.place.Load().mig == nil })
	for i, orphans := range census(t, c, p) {
		if len(orphans) != 0 {
			t.Errorf("m%d holds %d keys it does not own after the sweep", i, len(orphans))
		}
	}
	m1 := dialDirect(t, c.ms[1])
	for _, k := range theirs {
		if it, ok := m1.get(k); !ok || it.value != "while-down" {
			t.Fatalf("%s on m1: %+v, %v", k, it, ok)
		}
	}
}

// TestWarmNeverReadsDownServers: a previous server marked down is not
// read (a read of it could wait a whole timeout), nor once it is back
// within the window, since writes could not delete its copies meanwhile;
// one whose read fails is not read again in the window.
func TestWarmNeverReadsDownServers(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 4)
	g := startGate(t, c.ms[0].addr)
	lines := func(idx ...int) []string {
		out := c.lines(idx...)
		out[0] = g.addr + ":1 m0"
		return out
	}
	settings := "  distribution: ring\n  ejection: fail-fast\n"
	s := startProxy(t, placementYAML(settings, lines(0, 1, 2)))
	cl := dial(t, s.Addr("p").String())
	keys := testKeys("down", 600)
	for _, k := range keys {
		setValue(cl, k, "v", 0, 0)
	}
	was := routeNames(s.testPool("p"), keys)
	reload(t, s, placementYAML(settings, lines(0, 1, 2, 3)))
	p := s.testPool("p")
	now := routeNames(p, keys)
	var fromM0 []string
	for i, k := range keys {
		if was[i] == "m0" && now[i] == "m3" {
			fromM0 = append(fromM0, k)
		}
	}
	if len(fromM0) < 4 {
		t.Fatalf("%d keys moved from m0 to m3", len(fromM0))
	}
	for len(g.seen) > 0 {
		<-g.seen
	}
	p.backends[0].health.down.Store(true)
	for _, k := range fromM0[:len(fromM0)/2] {
		if got := getValue(cl, k); got != "" {
			t.Fatalf("%s read %q from m0 while it is down", k, got)
		}
	}
	p.backends[0].health.down.Store(false)
	for _, k := range fromM0[len(fromM0)/2:] {
		if got := getValue(cl, k); got != "" {
			t.Fatalf("%s read %q from m0, back in the window after it was down", k, got)
		}
	}
	select {
	case line := <-g.seen:
		t.Fatalf("m0 was sent %q", line)
	default:
	}
}

// TestWarmStopsReadingAFailedServer: a server a reload removed is read
// for the keys it held; once a read of it fails (here it is gone), it is
// not read again in the window, so that its keys miss at once rather than
// each waiting for the failure.
func TestWarmStopsReadingAFailedServer(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 4)
	settings := "  distribution: maglev\n"
	s := startProxy(t, c.yaml(settings, 0, 1, 2, 3))
	cl := dial(t, s.Addr("p").String())
	keys := testKeys("gone", 600)
	for _, k := range keys {
		setValue(cl, k, "v", 0, 0)
	}
	was := routeNames(s.testPool("p"), keys)
	reload(t, s, c.yaml(settings, 0, 1, 2))
	p := s.testPool("p")
	var held []string
	for i, k := range keys {
		if was[i] == "m3" {
			held = append(held, k)
		}
	}
	if got := getValue(cl, held[0]); got != "v" {
		t.Fatalf("%s, on the removed server, reads %q", held[0], got)
	}
	c.ms[3].stop()
	for _, k := range held[1:] {
		if got := getValue(cl, k); got != "" {
			t.Fatalf("%s reads %q from a server that is gone", k, got)
		}
	}
	if n := p.mig.stats.cleanFails.Load(); n != 1 {
		t.Errorf("%d failed reads of the server that is gone; want 1, then none", n)
	}
}
