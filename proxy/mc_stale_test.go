package proxy

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/kolco-dev/kolco/algo"
)

// staleScenario is a history of changes with a rewrite of every key in
// between: the servers before, during and after (indexes of m0..m3); late
// rewrites once the first change's window has closed (and its sweep is
// done), when a write no longer deletes the key's previous copy.
type staleScenario struct {
	name                  string
	before, during, after []int
	late                  bool
}

var staleScenarios = []staleScenario{
	{"add, rewrite, remove", []int{0, 1, 2}, []int{0, 1, 2, 3}, []int{0, 1, 2}, false},
	{"remove, rewrite, add", []int{0, 1, 2, 3}, []int{0, 1, 2}, []int{0, 1, 2, 3}, false},
	{"add, window, rewrite, remove", []int{0, 1, 2}, []int{0, 1, 2, 3}, []int{0, 1, 2}, true},
	{"remove, window, rewrite, add", []int{0, 1, 2, 3}, []int{0, 1, 2}, []int{0, 1, 2, 3}, true},
}

// staleRun writes n keys, applies the first change, reads half of them
// and rewrites all of them (after the change's migration has settled,
// its window closed and its sweep done, when late), applies the second
// change once it has settled, and reads every key back: it returns how
// many read a value older than the last written, and how many the first
// change moved.
func staleRun(t *testing.T, c *cluster, settings string, sc staleScenario, n int) (stale, moved int) {
	for _, m := range c.ms {
		dialDirect(t, m).flush()
	}
	s := startProxy(t, c.yaml(settings, sc.before...))
	defer func() { _ = s.Shutdown(t.Context()) }()
	cl := dial(t, s.Addr("p").String())
	keys := spreadKeys("stale", n)
	for _, k := range keys {
		setValue(cl, k, "old", 0, 0)
	}
	was := routeNames(s.testPool("p"), keys)
	reload(t, s, c.yaml(settings, sc.during...))
	for i, k := range routeNames(s.testPool("p"), keys) {
		if k != was[i] {
			moved++
		}
	}
	for _, k := range keys[:n/2] {
		getValue(cl, k)
	}
	rewrite := func() {
		for _, k := range keys {
			setValue(cl, k, "new", 0, 0)
		}
	}
	if !sc.late {
		rewrite()
	}
	p := s.testPool("p")
	eventually(t, "the change's migration to settle", func() bool { return p.place.Load().mig == nil })
	if sc.late {
		rewrite()
	}
	reload(t, s, c.yaml(settings, sc.after...))
	for _, k := range keys {
		if getValue(cl, k) == "old" {
			stale++
		}
	}
	return stale, moved
}

// flush empties a server.
func (d *direct) flush() {
	d.t.Helper()
	fmt.Fprintf(d.conn, "flush_all\r\n")
	if line, err := d.r.ReadString('\n'); err != nil || line != "OK\r\n" {
		d.t.Fatalf("flush_all: %q, %v", line, err)
	}
}

// TestNoStaleValueAfterChanges: a server added, every key rewritten, the
// server removed again (and the reverse), the rewrite in the first
// change's window or after it: with warm changes and the sweep no key
// reads a value older than its last write, for every kolco distribution
// and for twemproxy's with warm changes turned on, and the first change
// moved keys in each; cold, the keys the first change moved read their
// old values back, and warm without the sweep, those rewritten after the
// window (the counts are logged for comparison). The run held to no stale
// read writes n keys; the cold run, there to show that a moved key reads
// stale without warm changes, and the unswept one, logged, write the
// first half of them, which is enough to show it. Both are one engine
// path whatever the distribution (the unswept stale count was the keys
// moved with a late rewrite and 0 without, for all seventeen; the cold
// one the keys moved, 19 to 76 of 100, in all 68 runs), so they run for
// ring and twemproxy's ketama alone: each cost a third of the test's
// requests, and of its proxies and waits for a window. That the change
// moves keys, what makes the warm run's 0 mean something, is held for
// every distribution by the warm run itself.
func TestNoStaleValueAfterChanges(t *testing.T) {
	t.Parallel()
	const n, compared = 200, 100
	dists := append(algo.Names(), "ketama", "modula")
	var mu sync.Mutex
	var table []string
	for _, dist := range dists {
		base := "  distribution: " + dist + "\n"
		warm := base + "  warm: {enabled: true, window: 300}\n  sweep: {exclusive: [\"*\"], rate: 100000}\n"
		cold := base + "  warm: {enabled: false}\n"
		unswept := base + "  warm: {enabled: true, window: 300}\n"
		compare := dist == "ring" || dist == "ketama"
		for _, sc := range staleScenarios {
			// Each scenario on servers of its own, at once: a run
			// mostly waits for its change's window to close.
			t.Run(dist+"/"+sc.name, func(t *testing.T) {
				t.Parallel()
				c := startCluster(t, 4)
				coldStale, unsweptStale := "-", "-"
				if compare {
					stale, moved := staleRun(t, c, cold, sc, compared)
					if moved == 0 || stale == 0 {
						t.Errorf("%s: cold, %d keys moved and %d read stale: the test would not test a change", sc.name, moved, stale)
					}
					coldStale = fmt.Sprint(stale)
					stale, _ = staleRun(t, c, unswept, sc, compared)
					unsweptStale = fmt.Sprint(stale)
				}
				warmStale, moved := staleRun(t, c, warm, sc, n)
				if warmStale != 0 {
					t.Errorf("%s: %d of %d keys read a value older than their last write, with warm changes and the sweep", sc.name, warmStale, n)
				}
				if moved == 0 {
					t.Errorf("%s: the first change moved none of %d keys: the test would not test a change", sc.name, n)
				}
				mu.Lock()
				table = append(table, fmt.Sprintf("%-10s %-30s moved %4d of %d  stale: cold %4s  warm %4s  warm+sweep %d",
					dist, sc.name, moved, n, coldStale, unsweptStale, warmStale))
				mu.Unlock()
			})
		}
	}
	t.Cleanup(func() {
		sort.Strings(table)
		t.Logf("%d keys (%d cold and warm without the sweep):\n%s", n, compared, strings.Join(table, "\n"))
	})
}
