package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership/sentinel/sentineltest"
)

// TestStoreCrossingMoversKeepTheirPrimaries: two proxies of a store on
// Sentinels move its keys at once, modula over two masters to three, so
// that each sends keys from shard-a to shard-b and from shard-b to
// shard-a: one proxy's MIGRATEs never cross each other, but the two
// proxies' do, each source waiting on a target in a MIGRATE of its own
// until one times out. With migrate_timeout (5 s) above the Sentinels'
// down-after-milliseconds (1.5 s), a crossing held two healthy primaries
// silent until the Sentinels failed them over (the fault schedule's seed
// 3536, where the old primaries' acknowledged writes were lost); the
// movers keep their MIGRATEs' timeout to a third of it, and no primary
// changes while the keys move.
func TestStoreCrossingMoversKeepTheirPrimaries(t *testing.T) {
	t.Parallel()
	c := sentineltest.Start(t, 1500*time.Millisecond, "shard-a", "shard-b", "shard-c")
	all := strings.Replace(sentinelPoolYAML(c, "127.0.0.1:0", "  store: {enabled: true, migrate_timeout: 5000, batch: 1000}\n"),
		"distribution: ring", "distribution: modula", 1)
	two := strings.Replace(all, fmt.Sprintf("   - %s:1 shard-c\n", c.Shards[2].Primary.Addr), "", 1)
	proxies := []*Server{startProxy(t, two), startProxy(t, two)}
	cl := dialRedis(t, proxies[0].Addr("p").String())
	// Values of 1 KB, so that a MIGRATE of a batch takes long enough for
	// the other proxy's to meet it.
	val := strings.Repeat("v", 1024)
	keys := testKeys("cross", 20000)
	pipeline(t, cl, len(keys), func(i int) []string { return []string{"SET", keys[i], val} })
	primary := func(name string) map[string]bool {
		seen := map[string]bool{}
		for _, sp := range c.Sentinels {
			if v, err := sentineltest.Do(sp.Addr, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", name); err == nil && len(v.Elems) == 2 {
				seen[v.Elems[0].Str+":"+v.Elems[1].Str] = true
			}
		}
		return seen
	}
	var wg sync.WaitGroup
	for _, s := range proxies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.ReloadData(context.Background(), "test", []byte(all)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	// Watch the Sentinels until both moves are done and the Sentinels
	// have had down-after-milliseconds and a failover's time since, or
	// for 12 s of moving (a crossing's failover came 3.6 s after the
	// reload): on a busy machine crossings, each ended by a timeout,
	// slow the moves down.
	var failed [2]int64
	var moving [2]bool
	var changed []string
	start := time.Now()
	var doneAt time.Time
	for time.Since(start) < 12*time.Second && (doneAt.IsZero() || time.Since(doneAt) < 2*c.DownAfter) {
		done := true
		for i, s := range proxies {
			p := s.testPool("p")
			if m := moveOf(p.place.Load()); m != nil {
				failed[i] = max(failed[i], m.stats.failed.Load())
				moving[i] = true
			}
			done = done && moving[i] && moveOf(p.place.Load()) == nil
		}
		if done && doneAt.IsZero() {
			doneAt = time.Now()
		}
		for _, sh := range c.Shards[:2] {
			for addr := range primary(sh.Name) {
				if addr != sh.Primary.Addr {
					changed = append(changed, fmt.Sprintf("%s from %s to %s %v after the reload", sh.Name, sh.Primary.Addr, addr, time.Since(start).Round(time.Millisecond)))
				}
			}
		}
		if len(changed) > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	moved := "not done"
	if !doneAt.IsZero() {
		moved = fmt.Sprintf("done %v after the reload", doneAt.Sub(start).Round(time.Millisecond))
	}
	t.Logf("MIGRATEs failed (crossings and their retries): %d and %d, as far as seen; the moves %s", failed[0], failed[1], moved)
	for _, ch := range changed {
		t.Errorf("the Sentinels failed over a healthy primary while the keys moved: %s", ch)
	}
	if !moving[0] || !moving[1] {
		t.Errorf("a proxy never moved (moving: %v): the movers did not cross", moving)
	}
}

// TestMigrateTimeoutBelowSentinelsDownAfter: a MIGRATE's timeout is
// migrate_timeout, but for a pool on Sentinels a third of the
// down-after-milliseconds they report for the source's master at most,
// shared among the MIGRATEs one proxy may queue on the source;
// with no Sentinels, or before they have answered, it is unchanged. A
// lowering is logged once per master and value.
func TestMigrateTimeoutBelowSentinelsDownAfter(t *testing.T) {
	for _, tc := range []struct {
		name       string
		downAfter  func(string) time.Duration
		configured int
		want       int
	}{
		{"no sentinels", nil, 5000, 5000},
		{"not asked yet", func(string) time.Duration { return 0 }, 5000, 5000},
		{"down after 1500 ms", func(string) time.Duration { return 1500 * time.Millisecond }, 5000, 1500 / 3 / moveConns},
		{"down after 3 s", func(string) time.Duration { return 3 * time.Second }, 5000, 3000 / 3 / moveConns},
		{"down after 60 s", func(string) time.Duration { return 60 * time.Second }, 5000, 5000},
		{"configured below", func(string) time.Duration { return 1500 * time.Millisecond }, 100, 100},
		{"down after 2 ms", func(string) time.Duration { return 2 * time.Millisecond }, 5000, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs strings.Builder
			mv := &storeMover{downAfter: tc.downAfter, log: slog.New(slog.NewTextHandler(&logs, nil))}
			src := &backend{node: kolco.Node{ID: "shard-a"}}
			for range 3 {
				if got := mv.migrateTimeout(src, tc.configured); got != tc.want {
					t.Errorf("%d ms configured: %d ms, want %d", tc.configured, got, tc.want)
				}
			}
			lines := strings.Count(logs.String(), "timeout lowered")
			if want := min(1, tc.configured-tc.want); lines != want {
				t.Errorf("%d lines logged of a lowering, want %d:\n%s", lines, want, logs.String())
			}
		})
	}
}
