package proxy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRefusedVersionTriedAgain: a version the pool could not apply for a
// passing reason - it adds a server marked exclusive that cannot be
// emptied yet, its link cut - is applied once the server can be, without
// a new version of the source: before, the pool kept the servers in use
// until the source changed again (a fault schedule's seed 113: a file
// source's fourth server added while its link was cut; one proxy of two
// stayed on the old servers for good, reporting itself stale).
func TestRefusedVersionTriedAgain(t *testing.T) {
	t.Parallel()
	m0 := startMemcached(t, 0)
	port := freePort(t) // the added server's, nothing listening there yet
	path := filepath.Join(t.TempDir(), "members.yml")
	if err := os.WriteFile(path, []byte("src:\n  servers:\n   - "+m0.addr+":1 n0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startProxy(t, "kolco:\n  admin_listen: \":0\"\np:\n  listen: 127.0.0.1:0\n  distribution: ring\n  timeout: 1000\n"+
		"  sweep: {exclusive: [\"*\"]}\n  servers:\n   - "+m0.addr+":1 n0\n  membership: {file: {path: "+path+", interval: 20, settle: 40}}\n")
	eventually(t, "the file's first version served", func() bool { return membershipOf(t, s, "p").Revision == 1 })
	added := fmt.Sprintf("src:\n  servers:\n   - %s:1 n0\n   - 127.0.0.1:%d:1 n1\n", m0.addr, port)
	if err := os.WriteFile(path+".new", []byte(added), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the version adding n1 refused", func() bool {
		ms := membershipOf(t, s, "p")
		return ms.Stale && strings.Contains(ms.Error, "not applied")
	})
	startMemcached(t, port) // the server can be emptied now
	deadline := time.Now().Add(30 * time.Second)
	for ms := membershipOf(t, s, "p"); !slices.Equal(ms.Nodes, []string{"n0", "n1"}) || ms.Stale; ms = membershipOf(t, s, "p") {
		if time.Now().After(deadline) {
			t.Fatalf("30 s after n1 could be emptied, the pool serves %v (revision %d, stale %v: %s)", ms.Nodes, ms.Revision, ms.Stale, ms.Error)
		}
		time.Sleep(50 * time.Millisecond) // polling the pool's state
	}
}
