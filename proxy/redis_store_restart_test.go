package proxy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStoreStartsFromWhatItServed: a store on a membership source,
// stopped, whose source changes before it starts again, moves the keys
// that change owner from the servers it served, and reads every key. A
// fault schedule (the long run's seed 22: a Redis store on etcd, maglev,
// three proxies; a server added, a handover that began before the old
// process applied the change) read nil for a key that held "1": a
// process started on a source takes the servers of its configuration, not
// those it served, for the placement before the source's first version,
// and moves keys from there - so a key whose owner changed is read at its
// new server before anything moves it there. Here: the source lists r0 and
// r1, the configuration r2; the proxy stops; r3 joins the source; the
// proxy starts again - and reads the keys r3 now owns at r3, where they are
// not.
func TestStoreStartsFromWhatItServed(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	dir := t.TempDir()
	members := filepath.Join(dir, "members.yml")
	writeMembers := func(idx ...int) {
		t.Helper()
		var b strings.Builder
		b.WriteString("src:\n  servers:\n")
		for _, i := range idx {
			fmt.Fprintf(&b, "   - %s:1 r%d\n", rs[i].addr, i)
		}
		if err := os.WriteFile(members+".new", []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(members+".new", members); err != nil {
			t.Fatal(err)
		}
	}
	writeMembers(0, 1)
	y := fmt.Sprintf("kolco:\n  admin_listen: 127.0.0.1:0\n  state_file: %s\np:\n  listen: 127.0.0.1:0\n  redis: true\n"+
		"  distribution: ring\n  timeout: 2000\n  store: {enabled: true}\n  servers:\n   - %s:1 r2\n"+
		"  membership: {file: {path: %s, interval: 20, settle: 40}}\n", filepath.Join(dir, "state.json"), rs[2].addr, members)
	served := func(s *Server, nodes string) {
		t.Helper()
		<-s.Serving()
		eventually(t, "the source's servers served", func() bool { return fmt.Sprint(membershipOf(t, s, "p").Nodes) == nodes })
	}
	s := startProxy(t, y)
	served(s, "[r0 r1]")
	c := dialRedis(t, s.Addr("p").String())
	const n = 300
	for i := range n {
		if got := c.do("SET", fmt.Sprintf("k:%d", i), fmt.Sprint("v", i)); got != "+OK\r\n" {
			t.Fatalf("SET: %q", got)
		}
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	writeMembers(0, 1, 3) // r3 joins while no proxy runs
	s, logs := startProxyLogged(t, y)
	served(s, "[r0 r1 r3]")
	defer func() {
		if t.Failed() {
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, "store") || strings.Contains(l, "membership") || strings.Contains(l, "placement") {
					t.Log(l)
				}
			}
		}
	}()
	c = dialRedis(t, s.Addr("p").String())
	lost := 0
	for i := range n {
		if got := c.do("GET", fmt.Sprintf("k:%d", i)); !strings.HasSuffix(got, fmt.Sprint("v", i, "\r\n")) {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d keys read nil or other values after the proxy started again on the changed source", lost, n)
	}
}
