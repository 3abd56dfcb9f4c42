package proxy

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/realprog"
)

// TestTakeOverAcceptsOncePlaced: a server that takes over another's
// listening sockets accepts on them only once its pool on a membership
// source serves a version of it: a client that connects before waits,
// unanswered (the old process would answer it), past the wait of a server
// started afresh, and is answered once the source's file is there, by a
// pool that serves the file's servers. It waits past sourceWait (5 s)
// doing nothing, so it waits beside the other tests.
func TestTakeOverAcceptsOncePlaced(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
	path := filepath.Join(t.TempDir(), "members.yml") // not written yet: the source gives no version
	// Sockets are handed over by their configured addresses: no port 0.
	y := fmt.Sprintf("kolco:\n  admin_listen: 127.0.0.1:%d\np:\n  listen: 127.0.0.1:%d\n  distribution: ring\n  timeout: 10000\n"+
		"  servers:\n   - %s:1 n0\n  membership: {file: {path: %s, interval: 20, settle: 40}}\n", freePort(t), freePort(t), ms[0].addr, path)
	old := startProxy(t, y)
	files, err := old.ListenerFiles()
	if err != nil {
		t.Fatal(err)
	}
	lns := map[string]net.Listener{}
	for key, f := range files {
		if lns[key], err = net.FileListener(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	addr := old.Addr("p").String()
	// Every wait of the test is bounded: it once hung the package for
	// over ten minutes on a busy machine, with nothing to say where.
	ctx, cancel := context.WithTimeout(context.Background(), realprog.Patience)
	defer cancel()
	if err := old.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	cfg, err := ParseConfig([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	s := New(cfg, nil)
	s.Inherit(lns)
	started := time.Now()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(s) })
	c, err := net.DialTimeout("tcp", addr, realprog.Patience) // queued on the socket the new server has not accepted on
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("get k\r\n")); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	// The source stays silent past sourceWait, which a server started
	// afresh waits: one taking over waits on (takeOverWait), as the old
	// process serves meanwhile. At sourceWait it served its configured
	// servers (the fault schedule's seed 2420).
	_ = c.SetReadDeadline(started.Add(sourceWait + time.Second))
	if line, err := r.ReadString('\n'); err == nil {
		t.Fatalf("answered %q before the pool served its source's version", line)
	}
	select {
	case <-s.Serving():
		t.Fatalf("serving %v after its start, before the pool's source gave a version", time.Since(started).Round(time.Millisecond))
	default:
	}

	writeServers(t, path, ms[0], ms[1])
	select {
	case <-s.Serving():
	case <-time.After(sourceWait):
		t.Fatalf("not serving %v after the source's file was written", sourceWait)
	}
	if got := membershipOf(t, s, "p"); got.Revision == 0 || !slices.Equal(got.Nodes, []string{"n0", "n1"}) {
		t.Errorf("serving with the pool on %v (revision %d), want the file's n0, n1", got.Nodes, got.Revision)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if line, err := r.ReadString('\n'); err != nil || line != "END\r\n" {
		t.Errorf("the waiting client's request, once serving: %q %v", line, err)
	}
}

// TestStartAcceptsOncePlaced: a server started afresh - a proxy killed
// and started again, in a fleet whose source changed since its file was
// written - accepts on a pool's socket only once the pool serves its
// source's version, as one taking over does: before, it answered at once
// from its configured servers, where a change had moved keys away and
// their old values stayed (a fault schedule's seed 7: 49 stale reads in
// the 0.3 s before a Redis cache's file source answered).
func TestStartAcceptsOncePlaced(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
	path := filepath.Join(t.TempDir(), "members.yml") // not written yet: the source gives no version
	y := fmt.Sprintf("kolco:\n  admin_listen: 127.0.0.1:0\np:\n  listen: 127.0.0.1:0\n  distribution: ring\n  timeout: 10000\n"+
		"  servers:\n   - %s:1 n0\n  membership: {file: {path: %s, interval: 20, settle: 40}}\n", ms[0].addr, path)
	s := startProxy(t, y)
	c, err := net.Dial("tcp", s.Addr("p").String()) // queued on the socket the server has not accepted on
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("get k\r\n")); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if line, err := r.ReadString('\n'); err == nil {
		t.Fatalf("answered %q before the pool served its source's version", line)
	}
	select {
	case <-s.Serving():
		t.Fatal("serving before the pool's source gave a version")
	default:
	}
	writeServers(t, path, ms[0], ms[1])
	select {
	case <-s.Serving():
	case <-time.After(sourceWait):
		t.Fatalf("not serving %v after the source's file was written", sourceWait)
	}
	if got := membershipOf(t, s, "p"); got.Revision == 0 || !slices.Equal(got.Nodes, []string{"n0", "n1"}) {
		t.Errorf("serving with the pool on %v (revision %d), want the file's n0, n1", got.Nodes, got.Revision)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if line, err := r.ReadString('\n'); err != nil || line != "END\r\n" {
		t.Errorf("the waiting client's request, once serving: %q %v", line, err)
	}
}

// TestInheritViewsRefusesBadViews: a view handed over is kept only if a
// source's version could have been it.
func TestInheritViewsRefusesBadViews(t *testing.T) {
	a, b := kolco.Node{ID: "a", Addr: "127.0.0.1:1"}, kolco.Node{ID: "b", Addr: "127.0.0.1:2"}
	s := New(&Config{}, nil)
	s.InheritViews(map[string][]kolco.Node{
		"good":       {a, b},
		"none":       {},
		"twice":      {a, a},
		"unsorted":   {b, a},
		"no address": {a, {ID: "c"}},
		"bad id":     {{ID: "", Addr: "127.0.0.1:3"}},
	})
	if got := slices.Sorted(maps.Keys(s.sourcing.inheritedViews)); !slices.Equal(got, []string{"good"}) {
		t.Errorf("views kept: %v, want only good", got)
	}
}
