package proxy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/metadump"
)

// serverKeys returns the keys a server holds, with their CAS values.
func serverKeys(t *testing.T, m *memcached) map[string]uint64 {
	t.Helper()
	keys := map[string]uint64{}
	err := metadump.List(context.Background(), network(m.addr), m.addr, func(it metadump.Item) error {
		keys[it.Key] = it.Cas
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// census checks every server's keys against the pool's placement and
// returns, by server index, the keys it holds and does not own.
func census(t *testing.T, c *cluster, p *pool) []map[string]uint64 {
	t.Helper()
	pl := p.place.Load()
	var sc routeScratch
	out := make([]map[string]uint64, len(c.ms))
	for i, m := range c.ms {
		out[i] = map[string]uint64{}
		for k, cas := range serverKeys(t, m) {
			b := &backend{addr: m.addr}
			if !pl.owns(b, []byte(k), &sc) {
				out[i][k] = cas
			}
		}
	}
	return out
}

// TestSweepDeletesOnlyOrphans: after a change, with writes racing the
// sweep through the proxy (to the keys' servers) and straight to a swept
// server (values newer than the sweep listed), the sweep leaves no key on
// an exclusive server that does not own it, deletes no key a server owns
// and no value written after it was listed, and sweeps no server that is
// not exclusive.
func TestSweepDeletesOnlyOrphans(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 4)
	// m2 is shared: not exclusive. Warm changes off: the sweep starts at
	// once after the change.
	extra := "  distribution: rendezvous\n  warm: {enabled: false}\n  sweep: {exclusive: [m0, m1%s], rate: 200}\n"
	s := startProxy(t, c.yaml(fmt.Sprintf(extra, ""), 0, 1, 2))
	cl := dial(t, s.Addr("p").String())
	keys := testKeys("sweep", 2400)
	for _, k := range keys {
		setValue(cl, k, "v0", 0, 0)
	}
	p0 := s.testPool("p")
	if p0.mig.stats.listed.Load() != 0 {
		t.Fatal("a sweep ran before any change")
	}
	was := routeNames(p0, keys)
	reload(t, s, c.yaml(fmt.Sprintf(extra, ", m3"), 0, 1, 2, 3))
	p := s.testPool("p")
	// Writes through the proxy race the sweep: they go to the keys'
	// servers, which the sweep must leave alone.
	done := make(chan struct{})
	writer := dial(t, s.Addr("p").String())
	go func() {
		defer close(done)
		for i, k := range keys[:800] {
			setValue(writer, k, fmt.Sprintf("w%d", i), 0, 0)
		}
	}()
	// Once m0 is listed (it is swept first), write some of its orphans
	// straight to it: values newer than those listed.
	before := census(t, c, p)
	if len(before[0]) < 100 || len(before[2]) == 0 {
		t.Fatalf("orphans before the sweep: %d on m0, %d on m2", len(before[0]), len(before[2]))
	}
	eventually(t, "m0 to be listed", func() bool { return p.mig.stats.listed.Load() > 0 })
	m0 := dialDirect(t, c.ms[0])
	late := writeLate(m0, before[0], 40)
	<-done
	eventually(t, "the sweep to finish", func() bool { return p.place.Load().mig == nil })
	after := census(t, c, p)
	for i := range c.ms {
		for k := range after[i] {
			if i == 0 && late[k] {
				continue
			}
			if i != 2 {
				t.Errorf("m%d still holds %s, which it does not own", i, k)
			}
		}
	}
	for k := range late {
		if it, ok := m0.get(k); !ok || it.value != "late" {
			t.Errorf("%s, written to m0 after the sweep listed it: %+v, %v; the sweep deleted a newer value", k, it, ok)
		}
	}
	if len(after[2]) != len(before[2]) {
		t.Errorf("m2 is not exclusive, yet its orphans went from %d to %d", len(before[2]), len(after[2]))
	}
	now := routeNames(p, keys)
	for i, k := range keys {
		want := "v0"
		switch {
		case i < 800:
			want = fmt.Sprintf("w%d", i)
		case was[i] != now[i]:
			want = "" // moved, cold: warm changes are off
		}
		if got := getValue(cl, k); got != want {
			t.Fatalf("%s reads %q, want %q: the sweep deleted a key its server owns", k, got, want)
		}
	}
	st := p.mig.stats
	t.Logf("orphans before: m0 %d, m1 %d, m2 %d (shared); listed %d, deleted %d, kept %d",
		len(before[0]), len(before[1]), len(before[2]), st.listed.Load(), st.deleted.Load(), st.kept.Load())
}

// writeLate writes n of a server's orphans straight to it, and returns
// them.
func writeLate(d *direct, orphans map[string]uint64, n int) map[string]bool {
	late := map[string]bool{}
	for k := range orphans {
		if len(late) == n {
			break
		}
		d.set(k, "late")
		late[k] = true
	}
	return late
}

// TestSweepSurvivesReloadAndStopsOnShutdown: a reload in the middle of a
// sweep halts it and the new pool sweeps what is left; a shutdown in the
// middle of one stops it between two batches, leaving no goroutine.
func TestSweepSurvivesReloadAndStopsOnShutdown(t *testing.T) {
	c := startCluster(t, 3)
	// The servers' goroutines (each waits for its process) end with the
	// test, after the check: counted from here, only the proxy's count.
	base := runtime.NumGoroutine()
	slow := "  distribution: ring\n  warm: {enabled: false}\n  sweep: {exclusive: [\"*\"], rate: 20}\n"
	fast := "  distribution: ring\n  warm: {enabled: false}\n  sweep: {exclusive: [\"*\"], rate: 100000}\n"
	cfg, err := ParseConfig([]byte(c.yaml(slow, 0, 1)))
	if err != nil {
		t.Fatal(err)
	}
	s := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	cl := dial(t, s.Addr("p").String())
	for _, k := range testKeys("halt", 1500) {
		setValue(cl, k, "v", 0, 0)
	}
	reload(t, s, c.yaml(slow, 0, 1, 2))
	p := s.testPool("p")
	eventually(t, "the sweep to delete", func() bool { return p.mig.stats.deleted.Load() > 0 })
	reload(t, s, c.yaml(fast, 0, 1, 2)) // no change of placement: the sweep goes on in the new pool
	p = s.testPool("p")
	eventually(t, "the sweep to finish in the new pool", func() bool { return p.place.Load().mig == nil })
	for i, orphans := range census(t, c, p) {
		if len(orphans) != 0 {
			t.Fatalf("m%d holds %d keys it does not own after the sweep", i, len(orphans))
		}
	}

	reload(t, s, c.yaml(slow, 0, 2)) // m1 leaves: its keys' copies elsewhere... and m0, m2 gain keys
	for _, k := range testKeys("halt2", 1500) {
		setValue(cl, k, "v", 0, 0)
	}
	reload(t, s, c.yaml(slow, 0, 1, 2)) // m1 back: a slow sweep of m0 and m2 starts
	p = s.testPool("p")
	eventually(t, "the sweep to delete", func() bool { return p.place.Load().mig != nil && p.mig.stats.deleted.Load() > 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown in the middle of a sweep: %v", err)
	}
	deleted := p.mig.stats.deleted.Load()
	left := 0
	for _, orphans := range census(t, c, p) {
		left += len(orphans)
	}
	if left == 0 {
		t.Fatal("the sweep finished before the shutdown: the test did not stop one")
	}
	if p.mig.stats.deleted.Load() != deleted {
		t.Fatal("the sweep deleted after Shutdown returned")
	}
	eventually(t, "goroutines to end", func() bool { return runtime.NumGoroutine() <= base })
	t.Logf("shutdown stopped the sweep with %d orphans left", left)
}

// TestSweepWithReplicas: with two copies of each key, the sweep counts a
// server that holds one of a key's copies as owning it: after a change it
// deletes the copies on servers no longer among the key's two, and no
// other.
func TestSweepWithReplicas(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 4)
	settings := "  distribution: ring\n  replicas: 2\n  sweep: {exclusive: [\"*\"], rate: 100000}\n"
	s := startProxy(t, c.yaml(settings, 0, 1, 2))
	cl := dial(t, s.Addr("p").String())
	for _, k := range testKeys("replicas", 900) {
		setValue(cl, k, "v", 0, 0)
	}
	var before []map[string]uint64
	for _, m := range c.ms {
		before = append(before, serverKeys(t, m))
	}
	reload(t, s, c.yaml(settings, 0, 1, 2, 3))
	p := s.testPool("p")
	eventually(t, "the sweep to end", func() bool { return p.place.Load().mig == nil })
	if p.mig.stats.deleted.Load() == 0 {
		t.Fatal("the change left no copy to sweep: the test would not test the sweep")
	}
	for i, orphans := range census(t, c, p) {
		if len(orphans) != 0 {
			t.Errorf("m%d holds %d keys of which it is no copy", i, len(orphans))
		}
	}
	pl := p.place.Load()
	var sc routeScratch
	for i, m := range c.ms {
		after := serverKeys(t, m)
		for k := range before[i] {
			if _, kept := after[k]; !kept && pl.owns(&backend{addr: m.addr}, []byte(k), &sc) {
				t.Errorf("m%d, one of %s's copies, lost it", i, k)
			}
		}
	}
}
