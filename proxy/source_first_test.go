package proxy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestSourceFirstVersionEmptiesNothing: a pool started on its configured
// servers takes its source's first version as what the fleet serves, not
// as servers added: an exclusive server the source lists beyond the
// configured ones keeps its values. Before, each start - a restart, a
// handover's new process - emptied it (flush_all) as a reload that adds
// it does, wiping what the fleet, and the process before, had written
// there; a read then fell back to where the key had been before, and read
// the value of then (a fault schedule's seed 1 of the long run: memcached,
// fail-fast, ring, etcd, three proxies; after a handover, 2 reads of a key
// returned a value ten seconds older than one written 0.3 s before).
func TestSourceFirstVersionEmptiesNothing(t *testing.T) {
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
	if got := dial(t, ms[1].addr).do("set k 0 0 4\r\nkept\r\n"); got != "STORED\r\n" {
		t.Fatalf("set on m1: %q", got)
	}
	path := filepath.Join(t.TempDir(), "members.yml")
	y := fmt.Sprintf("src:\n  servers:\n   - %s:1 n0\n   - %s:1 n1\n", ms[0].addr, ms[1].addr)
	if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startProxy(t, "kolco:\n  admin_listen: \":0\"\np:\n  listen: 127.0.0.1:0\n  distribution: ring\n  timeout: 10000\n"+
		"  sweep: {exclusive: [\"*\"]}\n  servers:\n   - "+ms[0].addr+":1 n0\n  membership: {file: {path: "+path+", interval: 20, settle: 40}}\n")
	select {
	case <-s.Serving():
	case <-time.After(sourceWait + 5*time.Second):
		t.Fatal("not serving")
	}
	if got := membershipOf(t, s, "p"); got.Revision == 0 || !slices.Equal(got.Nodes, []string{"n0", "n1"}) {
		t.Fatalf("serving %v (revision %d), want the file's n0, n1", got.Nodes, got.Revision)
	}
	if !holds(t, ms[1], "k") {
		t.Error("n1, listed by the source from the start, was emptied")
	}
}

// TestSourceFirstVersionOpensNoWindow: the source's first version after a
// start opens no window onto the configured servers: a key the source's
// servers place on n1 is read there alone, never from n0, where the
// configured servers alone would place it and an old copy may stay. Before,
// a miss on n1 fell back to n0 and read that copy (the long fault
// schedules' seed 1 again, once the first version no longer emptied n1:
// after a handover, a key read its value from before m4 joined).
func TestSourceFirstVersionOpensNoWindow(t *testing.T) {
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
	path := filepath.Join(t.TempDir(), "members.yml")
	y := fmt.Sprintf("src:\n  servers:\n   - %s:1 n0\n   - %s:1 n1\n", ms[0].addr, ms[1].addr)
	if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startProxy(t, "kolco:\n  admin_listen: \":0\"\np:\n  listen: 127.0.0.1:0\n  distribution: ring\n  timeout: 10000\n"+
		"  servers:\n   - "+ms[0].addr+":1 n0\n  membership: {file: {path: "+path+", interval: 20, settle: 40}}\n")
	select {
	case <-s.Serving():
	case <-time.After(sourceWait + 5*time.Second):
		t.Fatal("not serving")
	}
	var onN1 []string // keys the file's servers place on n1
	for _, k := range diffKeys(40) {
		var locs []Location
		adminGet(t, s, "/v1/pools/p/locate?key="+urlKey(k), "", &locs)
		if locs[0].Servers[0].Name == "n1" {
			onN1 = append(onN1, k)
		}
	}
	if len(onN1) == 0 {
		t.Fatal("no key on n1")
	}
	m0 := dial(t, ms[0].addr)
	for _, k := range onN1 {
		if got := m0.do("set " + k + " 0 0 3\r\nold\r\n"); got != "STORED\r\n" { // a copy from before
			t.Fatalf("set on n0: %q", got)
		}
	}
	c := dial(t, s.Addr("p").String())
	for _, k := range onN1 {
		if got := c.do("get " + k + "\r\n"); got != "END\r\n" {
			t.Fatalf("get %q, which n1 does not hold: %q - read from n0, which the pool never placed it on", k, got)
		}
	}
}
