package proxy

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sweepFleetYAML is a proxy's configuration: pool p on the file source
// path, ring, changes cold, with extra global and pool settings.
func sweepFleetYAML(global, extra, path string, ms ...*memcached) string {
	var b strings.Builder
	b.WriteString("kolco:\n  admin_listen: 127.0.0.1:0\n" + global)
	b.WriteString("p:\n  listen: 127.0.0.1:0\n  distribution: ring\n  timeout: 10000\n  warm: {enabled: false}\n" + extra)
	b.WriteString("  servers:\n")
	for i, m := range ms {
		fmt.Fprintf(&b, "   - %s:1 n%d\n", m.addr, i)
	}
	b.WriteString("  membership: {file: {path: " + path + ", interval: 20, settle: 40}}\n")
	return b.String()
}

// deferredBy returns kolco_proxy_sweep_deferred_total of pool p for the
// reason given, as the admin endpoint serves it.
func deferredBy(t *testing.T, s *Server, reason string) int {
	t.Helper()
	re := regexp.MustCompile(`(?m)^kolco_proxy_sweep_deferred_total\{pool="p",reason="` + reason + `"\} (\d+)$`)
	m := re.FindStringSubmatch(scrape(t, s))
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// keyCounts returns how many keys each server holds.
func keyCounts(t *testing.T, ms []*memcached) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = len(serverKeys(t, m))
	}
	return out
}

// ownedHeld returns, by server address, the keys a server holds and owns
// under p's placement.
func ownedHeld(t *testing.T, p *pool, ms []*memcached) map[string][]string {
	out := map[string][]string{}
	pl := p.place.Load()
	var sc routeScratch
	for _, m := range ms {
		for k := range serverKeys(t, m) {
			if pl.owns(&backend{addr: m.addr}, []byte(k), &sc) {
				out[m.addr] = append(out[m.addr], k)
			}
		}
	}
	return out
}

// TestSweepWaitsForFleet: three proxies follow one membership; the one
// that sweeps lists the other two in kolco.admin_peers. While a peer
// places by another version of the source (its file not yet updated),
// or cannot be asked (its admin endpoint cut), the sweep is deferred and
// counted, and no key is listed or deleted; once every peer reports the
// same fingerprint the sweep runs, deletes the orphans and no key a
// server owns. A shutdown while a sweep waits stops it.
func TestSweepWaitsForFleet(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	dir := t.TempDir()
	shared, late := filepath.Join(dir, "members.yml"), filepath.Join(dir, "late.yml")
	writeServers(t, shared, ms[0], ms[1])
	writeServers(t, late, ms[0], ms[1])
	peer1 := startProxy(t, sweepFleetYAML("", "", shared, ms[0], ms[1]))
	peer2 := startProxy(t, sweepFleetYAML("", "", late, ms[0], ms[1]))
	cut1, cut2 := newCutter(t, peer1.AdminAddr().String()), newCutter(t, peer2.AdminAddr().String())
	s := startProxy(t, sweepFleetYAML("  admin_peers: [\""+cut1.addr()+"\", \""+cut2.addr()+"\"]\n",
		"  sweep: {exclusive: [\"*\"], rate: 100000}\n", shared, ms[0], ms[1]))
	all := []*Server{s, peer1, peer2}
	serving := func(n int, of ...*Server) func() bool {
		return func() bool {
			for _, x := range of {
				if len(membershipOf(t, x, "p").Nodes) != n || x.testPool("p").place.Load().mig != nil {
					return false
				}
			}
			return true
		}
	}
	eventually(t, "every proxy on the file's two servers", serving(2, all...))
	cl := dial(t, s.Addr("p").String())
	for _, k := range testKeys("fleet", 1500) {
		setValue(cl, k, "v", 0, 0)
	}

	// A peer differs: its file is behind.
	before, listed := keyCounts(t, ms), s.testPool("p").mig.stats.listed.Load()
	writeServers(t, shared, ms[0], ms[1], ms[2])
	eventually(t, "this proxy and peer 1 on three servers", func() bool {
		return len(membershipOf(t, s, "p").Nodes) == 3 && len(membershipOf(t, peer1, "p").Nodes) == 3
	})
	eventually(t, "a sweep deferred for a differing peer", func() bool { return deferredBy(t, s, "differs") > 0 })
	checkDeferred(t, s, ms, before, listed, "differs", cut2.addr())
	p := s.testPool("p")
	owned := ownedHeld(t, p, ms)
	writeServers(t, late, ms[0], ms[1], ms[2])
	eventually(t, "the sweep to run once peer 2 agrees", serving(3, all...))
	checkSwept(t, p, ms, owned, 0)

	// A peer cannot be asked.
	cut1.setCut(true)
	writeServers(t, late, ms[0], ms[1], ms[2], ms[3])
	writeServers(t, shared, ms[0], ms[1], ms[2], ms[3])
	before, listed = keyCounts(t, ms), p.mig.stats.listed.Load()
	eventually(t, "this proxy on four servers", func() bool { return len(membershipOf(t, s, "p").Nodes) == 4 })
	eventually(t, "a sweep deferred for an unreachable peer", func() bool { return deferredBy(t, s, "unreachable") > 0 })
	checkDeferred(t, s, ms, before, listed, "unreachable", cut1.addr())
	p = s.testPool("p")
	owned, deleted := ownedHeld(t, p, ms), p.mig.stats.deleted.Load()
	cut1.setCut(false)
	eventually(t, "the sweep to run once peer 1 answers", serving(4, all...))
	checkSwept(t, p, ms, owned, deleted)
	t.Logf("deferred: %d for a differing peer, %d for an unreachable one; deleted %d, listed %d",
		deferredBy(t, s, "differs"), deferredBy(t, s, "unreachable"), p.mig.stats.deleted.Load(), p.mig.stats.listed.Load())

	// A shutdown while a sweep waits stops it.
	cut2.setCut(true)
	writeServers(t, shared, ms[0], ms[1], ms[2])
	shutdownWhileWaiting(t, s)
}

// checkDeferred checks that the sweep of s's pool, deferred, left its
// change unsettled, the servers' keys as they were (before: how many
// each held) and listed none (listed: the count before), shows as waiting
// in the metrics and the admin endpoint for reason, naming peer, and has
// orphans to sweep.
func checkDeferred(t *testing.T, s *Server, ms []*memcached, before []int, listed uint64, reason, peer string) {
	t.Helper()
	why := "a peer " + reason
	p := s.testPool("p")
	if p.place.Load().mig == nil {
		t.Fatalf("%s, yet the change settled", why)
	}
	if got := keyCounts(t, ms); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatalf("%s, yet the servers' keys went from %v to %v", why, before, got)
	}
	if got := p.mig.stats.listed.Load(); got != listed {
		t.Fatalf("%s, yet a sweep listed %d keys", why, got-listed)
	}
	if !strings.Contains(scrape(t, s), "\nkolco_proxy_sweep_waiting{pool=\"p\"} 1\n") {
		t.Errorf("%s, yet kolco_proxy_sweep_waiting is not 1", why)
	}
	var status PoolStatus
	adminGet(t, s, "/v1/pools/p", "", &status)
	if !strings.HasPrefix(status.SweepDeferred, reason+": ") || !strings.Contains(status.SweepDeferred, peer) {
		t.Errorf("%s, yet the admin endpoint says sweep_deferred %q", why, status.SweepDeferred)
	}
	t.Logf("sweep_deferred: %s", status.SweepDeferred)
	orphans := 0
	for _, o := range census(t, &cluster{t: t, ms: ms}, p) {
		orphans += len(o)
	}
	if orphans == 0 {
		t.Fatal("the change left no orphan: the test would not test the sweep")
	}
}

// checkSwept checks that the sweep left no orphan on any server and kept
// every key a server owned (owned: as held before the sweep), and that
// it deleted keys (deleted: the count before).
func checkSwept(t *testing.T, p *pool, ms []*memcached, owned map[string][]string, deleted uint64) {
	t.Helper()
	if p.mig.stats.deleted.Load() == deleted {
		t.Fatal("the sweep deleted nothing")
	}
	if w := p.mig.stats.deferWhy.Load(); w != nil {
		t.Errorf("the sweep ran, yet still reports it waits: %s", *w)
	}
	for i, o := range census(t, &cluster{t: t, ms: ms}, p) {
		if len(o) != 0 {
			t.Errorf("m%d holds %d keys it does not own after the sweep", i, len(o))
		}
	}
	for _, m := range ms {
		now := serverKeys(t, m)
		for _, k := range owned[m.addr] {
			if _, ok := now[k]; !ok {
				t.Errorf("%s lost %s, which it owns", m.addr, k)
			}
		}
	}
}

// TestSweepFleetExplained: --check says that a pool on a membership
// source sweeps only once its peers agree, and says nothing of peers for
// a pool on its servers list.
func TestSweepFleetExplained(t *testing.T) {
	const sweep = "  sweep: {exclusive: [\"*\"]}\n"
	m := &memcached{addr: "127.0.0.1:11211"}
	for _, tc := range []struct {
		yaml string
		want bool
	}{
		{sweepFleetYAML("  admin_peers: [\"127.0.0.1:1\"]\n", sweep, filepath.Join(t.TempDir(), "members.yml"), m), true},
		{poolYAML("  distribution: ring\n"+sweep, m), false},
	} {
		cfg, err := ParseConfig([]byte(tc.yaml))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := cfg.WithDefaults().Explain(&b); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), "only once every proxy of kolco.admin_peers reports the same placement"); got != tc.want {
			t.Errorf("membership source %v: the explanation says the sweep waits for peers: %v\n%s", tc.want, got, b.String())
		}
	}
}

// shutdownWhileWaiting waits for another deferral of the sweep of s's
// pool, then shuts s down: Shutdown returns, and the change is left
// unsettled.
func shutdownWhileWaiting(t *testing.T, s *Server) {
	t.Helper()
	was := deferredBy(t, s, "unreachable")
	eventually(t, "a sweep deferred again", func() bool { return deferredBy(t, s, "unreachable") > was })
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- s.Shutdown(ctx)
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("shutdown while a sweep waits: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("shutdown while a sweep waits did not return")
	}
	if s.testPool("p").place.Load().mig == nil {
		t.Error("the last change settled, so the shutdown did not stop a waiting sweep")
	}
}
