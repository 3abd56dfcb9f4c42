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
