package proxy

import (
	"fmt"
	"testing"
)

// TestWarmDeleteRacingCopyDoesNotResurrect puts a delete between a
// fallback's read at the previous server and its copy to the new one: the
// previous server's reply to the fallback is held until the delete has
// been sent to both servers. The copy must not bring the key back.
func TestWarmDeleteRacingCopyDoesNotResurrect(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 4)
	g := startGate(t, c.ms[0].addr)
	lines := func(idx ...int) []string {
		out := c.lines(idx...)
		out[0] = fmt.Sprintf("%s:1 m0", g.addr) // m0 behind the gate
		return out
	}
	s := startProxy(t, placementYAML("  distribution: ring\n", lines(0, 1, 2)))
	cl := dial(t, s.Addr("p").String())
	keys := testKeys("race", 300)
	for _, k := range keys {
		setValue(cl, k, "old", 0, 0)
	}
	was := routeNames(s.testPool("p"), keys)
	reload(t, s, placementYAML("  distribution: ring\n", lines(0, 1, 2, 3)))
	now := routeNames(s.testPool("p"), keys)
	var moved []string
	for i, k := range keys {
		if was[i] == "m0" && now[i] == "m3" {
			moved = append(moved, k)
		}
	}
	if len(moved) < 3 {
		t.Fatalf("%d keys moved from m0 to m3", len(moved))
	}
	for _, k := range moved[:3] {
		g.hold(true)
		reader, deleter := dial(t, s.Addr("p").String()), dial(t, s.Addr("p").String())
		read := make(chan string, 1)
		go func() { read <- reader.do("get " + k + "\r\n") }()
		g.await(t, "mg "+k) // the fallback's read is at m0; its reply is held
		deleted := make(chan string, 1)
		go func() { deleted <- deleter.do("delete " + k + "\r\n") }()
		g.await(t, "md "+k) // the delete has been sent to m3 and to m0
		g.hold(false)
		if got := <-deleted; got != "DELETED\r\n" {
			t.Fatalf("delete %s: %q", k, got)
		}
		<-read // the value from before the delete, or a miss: either is a read concurrent with it
		if got := getValue(cl, k); got != "" {
			t.Fatalf("%s deleted, then read back %q: the fallback's copy brought it back", k, got)
		}
		if it, ok := dialDirect(t, c.ms[3]).get(k); ok {
			t.Fatalf("%s deleted, and the new server holds %+v", k, it)
		}
	}
}
