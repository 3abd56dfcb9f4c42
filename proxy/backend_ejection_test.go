package proxy

import (
	"fmt"
	"testing"

	"github.com/kolco-dev/kolco/algo"
)

// rehashPool are the settings of a pool under ejection: rehash that marks
// a server down at its first failure and probes it every 20 ms.
const rehashPool = "  auto_eject_hosts: true\n  ejection: rehash\n  server_failure_limit: 1\n" +
	"  server_retry_timeout: 600000\n  health_check: {interval: 20, timeout: 2000}\n"

// TestEjectionMovesOnlyTheDownServersKeys runs, for every kolco
// distribution under rehash, six memcached servers behind the proxy
// through two outages of two servers each: m1 then m4 go down and come
// back first-out-first-back, then last-out-first-back. While servers are
// down no key of a server still up misses; a key of a down server,
// rewritten meanwhile, never reads back the value it had before; once both
// are back every key is written to its original server again, checked on
// the servers themselves.
func TestEjectionMovesOnlyTheDownServersKeys(t *testing.T) {
	t.Parallel()
	for _, name := range algo.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := startFleet(t, 6, "  distribution: "+name+"\n"+rehashPool)
			keys := testKeys(name, 480)
			for gen, restoreOrder := range [][2]int{{1, 4}, {4, 1}} {
				f.outage(keys, gen, restoreOrder)
			}
		})
	}
}

// outage is one round of TestEjectionMovesOnlyTheDownServersKeys: m1 and
// m4 are ejected in that order and restored in the order given.
func (f *cutServers) outage(keys []string, gen int, restoreOrder [2]int) {
	t := f.t
	value := func(k string) string { return fmt.Sprintf("%s=%d", k, gen) }
	setAll(t, f.addr, keys, value)
	owner := f.owners(keys, value)
	byServer := make([][]string, len(f.ms))
	for i, k := range keys {
		byServer[owner[i]] = append(byServer[owner[i]], k)
	}
	for si, ks := range byServer {
		if len(ks) == 0 {
			t.Fatalf("m%d holds none of %d keys: the test would not test it", si, len(keys))
		}
	}
	down := map[int]bool{}
	for _, victim := range []int{1, 4} {
		f.eject(victim, byServer[victim][0])
		down[victim] = true
		var upKeys []string
		for si, ks := range byServer {
			if !down[si] {
				upKeys = append(upKeys, ks...)
			}
		}
		got := getAll(t, f.addr, upKeys)
		missed := 0
		for _, k := range upKeys {
			if got[k] != value(k) {
				missed++
			}
		}
		if missed > 0 {
			t.Fatalf("m%d down (and %d servers in all): %d of the %d keys of the servers still up missed", victim, len(down), missed, len(upKeys))
		}
		// Rewritten while its server is out: the server must never serve
		// the value it still holds.
		setAll(t, f.addr, byServer[victim], func(k string) string { return value(k) + "-new" })
	}
	for _, i := range restoreOrder {
		f.restore(i)
	}
	out := append(append([]string(nil), byServer[1]...), byServer[4]...)
	for k, v := range getAll(t, f.addr, out) {
		if v == value(k) {
			t.Fatalf("%s read back %q, its value from before it was rewritten while its server was out", k, v)
		}
	}
	next := func(k string) string { return fmt.Sprintf("%s=%d-after", k, gen) }
	setAll(t, f.addr, keys, next)
	for i, at := range f.owners(keys, next) {
		if at != owner[i] {
			t.Fatalf("after the servers came back (in the order m%d, m%d), %s is written to m%d, not to m%d, its server before",
				restoreOrder[0], restoreOrder[1], keys[i], at, owner[i])
		}
	}
}
