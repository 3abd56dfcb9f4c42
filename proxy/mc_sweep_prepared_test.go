package proxy

import (
	"context"
	"testing"
)

// TestSweepWaitsForTheReplacedPool changes a pool with replicas, warm
// changes off and every server swept (as the fault schedule does) while
// the running pool writes: "add D" is prepared, the running pool writes
// every key (some of their copies on servers D takes them from), the
// change is committed, every key is written again through it, and "remove
// D" gives the keys back. No read may then return the value written
// while the change was prepared. Before, the prepared pool swept at once,
// before the running pool's writes, and marked the servers clean, so that
// the presweep of "remove D" passed them over and they served those
// copies (the fault schedule's seed 2900).
func TestSweepWaitsForTheReplacedPool(t *testing.T) {
	t.Parallel()
	for _, dist := range []string{"flip", "ring"} {
		t.Run(dist, func(t *testing.T) {
			t.Parallel()
			runSweepWaitsForTheReplacedPool(t, dist)
		})
	}
}

func runSweepWaitsForTheReplacedPool(t *testing.T, dist string) {
	settings := "  distribution: " + dist + "\n  replicas: 2\n  auto_eject_hosts: true\n  ejection: rehash\n" +
		"  server_failure_limit: 1\n  server_retry_timeout: 3600000\n  warm: {enabled: false}\n  sweep: {exclusive: [\"*\"]}\n"
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	without, with := poolYAML(settings, ms[:3]...), poolYAML(settings, ms...)
	d := &doublePool{t: t, proto: "memcached", s: startProxy(t, without)}
	d.p = d.s.testPool("p")
	d.redial()
	keys := testKeys("prepared-sweep", 600)
	d.setAll(keys, "v1")

	cfg, err := ParseConfig([]byte(with)) // D added
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	// Reload's steps, with the running pool writing once the prepared
	// pool has swept, or waits to.
	d.s.mu.Lock()
	tr, sources, err := d.s.prepareSourced(context.Background(), cfg.WithDefaults())
	if err != nil {
		d.s.mu.Unlock()
		t.Fatal(err)
	}
	next := tr.pools[0].next
	eventually(t, "the prepared pool to sweep or wait", func() bool {
		return next.place.Load().mig == nil || next.mig.stats.deferWhy.Load() != nil
	})
	d.setAll(keys, "v2") // through the running pool, by its placement
	d.s.commit(tr)
	sources.commit()
	d.s.mu.Unlock()

	d.p = d.s.testPool("p")
	if d.p != next {
		t.Fatal("the reload did not commit the prepared pool")
	}
	eventually(t, "the change's sweep", func() bool { return d.p.place.Load().mig == nil })
	d.setAll(keys, "v3")
	reload(t, d.s, without) // D removed: the keys go back
	d.p = d.s.testPool("p")
	a, aKeys := d.mostOwned(keys)
	a.fail(ErrConnLost, 1)
	if !a.health.isDown() {
		t.Fatal("not marked down")
	}
	if n, ex := d.older(aKeys, "v3"); n > 0 {
		t.Errorf("%d of %d keys read a value older than the last acknowledged at their other copy (%s)", n, len(aKeys), ex)
	}
}
