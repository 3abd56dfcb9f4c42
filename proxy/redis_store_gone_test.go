package proxy

import (
	"fmt"
	"strings"
	"testing"
)

// TestStoreMoveAsksOnce: while a store moves its keys, a request for a
// key that a MIGRATE already took off its old server (a request's own, or
// the mover's) goes to the key's new server without another MIGRATE. The
// mover waits for its hours here, so that only requests move keys: each
// moving key is written once and read twice, and its old server runs one
// MIGRATE for it, not three (each waited behind the mover's MIGRATEs
// there), and no read there either: a read of a key not moved yet is
// answered there without a MIGRATE (TestStoreMoveReadsAKeyAtItsOldServer),
// so a write moves the keys here.
func TestStoreMoveAsksOnce(t *testing.T) {
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0)}
	later, yaml := laterHours(), storeHoursYAML
	s := startProxy(t, yaml(rs[:1], later))
	keys := fillStore(t, s.Addr("p").String(), 400)
	reload(t, s, yaml(rs, later))
	var moving []string
	for _, k := range keys {
		if ownerOf(s.testPool("p"), k) == rs[1].addr {
			moving = append(moving, k)
		}
	}
	if len(moving) == 0 {
		t.Fatal("no key moves")
	}
	old := dialRedis(t, rs[0].addr)
	old.do("CONFIG", "RESETSTAT")
	c := dialRedis(t, s.Addr("p").String())
	for _, k := range moving {
		if got := c.do("SET", k, "v"); got != "+OK\r\n" {
			t.Fatalf("SET %s: %q", k, got)
		}
	}
	for range 2 {
		for _, k := range moving {
			if got := c.do("GET", k); got != "$1\r\nv\r\n" {
				t.Fatalf("GET %s: %q", k, got)
			}
		}
	}
	migrates := 0
	for _, l := range strings.Split(old.do("INFO", "commandstats"), "\r\n") {
		for _, cmd := range []string{"cmdstat_eval:", "cmdstat_migrate:"} {
			if rest, ok := strings.CutPrefix(l, cmd); ok {
				var n int
				fmt.Sscanf(rest, "calls=%d", &n)
				migrates = max(migrates, n) // a script's MIGRATE counts as its own call too
			}
		}
	}
	if migrates != len(moving) {
		t.Errorf("the old server ran %d MIGRATEs for %d moving keys written once and read twice each, want one each", migrates, len(moving))
	}
	if n := commandCalls(t, rs[0].addr, "exec"); n != 0 {
		t.Errorf("the old server answered %d reads of keys a MIGRATE took off it, want 0", n)
	}
	reload(t, s, yaml(rs, ""))
	waitMoved(t, s.testPool("p"))
}
