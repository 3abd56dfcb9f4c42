package proxy

import (
	"context"
	"strings"
	"testing"
)

// TestReturnAcrossAChangeWithoutJournal: a memcached pool that keeps no
// outage journal (fail-fast, one copy), with warm changes and a sweep,
// whose server A is marked down while two changes come: "add m0", which
// gives m0 some of A's keys, written and deleted there since, then
// "remove m0", which gives them back to A. The presweep of the second
// passes A over, as it is down; A's copies of those keys are from before
// it went out. Once A is back, no read of them returns a value older than
// the last one acknowledged (a delete included), whether A comes back
// after the second change is committed or while it is prepared (the
// running pool's probe first, or the prepared pool's). Before, A served them
// at their values of before (every key m0 took read stale at A's return):
// only a pool with an outage journal recorded the changes a down server
// missed. Ejection none is no row: it marks no server down, so the
// presweep lists every server and refuses a change it cannot list one for.
func TestReturnAcrossAChangeWithoutJournal(t *testing.T) {
	t.Parallel() // as its cases are, beside one another
	for _, ejection := range []string{"fail-fast", "fail-fast without probes"} {
		for _, when := range []string{"after the commit", "while prepared, the running pool's probe first",
			"while prepared, the prepared pool's probe first"} {
			t.Run(strings.ReplaceAll(ejection+", "+when, " ", "_"), func(t *testing.T) {
				t.Parallel()
				settings := "  distribution: ring\n  ejection: fail-fast\n  server_failure_limit: 1\n  timeout: 2000\n" +
					"  server_retry_timeout: 3600000\n  warm: {enabled: true}\n  sweep: {exclusive: [\"*\"]}\n"
				if ejection == "fail-fast without probes" {
					settings += "  health_check: {interval: -1}\n"
				}
				runReturnWithoutJournal(t, settings, when)
			})
		}
	}
}

func runReturnWithoutJournal(t *testing.T, settings, when string) {
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	m0, a, without := ms[0].addr, ms[2].addr, poolYAML(settings, ms[1:]...)
	d := &doublePool{t: t, proto: "memcached", s: startProxy(t, without)}
	d.p = d.s.testPool("p")
	d.redial()
	m := newCacheModel(d)
	var ofA []string
	for _, k := range testKeys("failfast-return", 3000) {
		if ownerOf(d.p, k) == a {
			ofA = append(ofA, k)
		}
	}
	m.set(ofA, "v1")
	backendAt(d.p.backends, a).fail(ErrConnLost, 1)
	if !backendAt(d.p.backends, a).health.isDown() {
		t.Fatal("A not marked down")
	}
	reload(t, d.s, poolYAML(settings, ms...)) // m0 added while A is out
	d.p = d.s.testPool("p")
	var gained []string
	for _, k := range ofA {
		if configuredOwnerOf(d.p, k) == m0 {
			gained = append(gained, k)
		}
	}
	if len(gained) < 20 {
		t.Fatalf("%d keys of A's go to m0: too few to check", len(gained))
	}
	m.set(gained, "v2")
	m.del(gained[:len(gained)/2])

	// m0 removed while A is out: its presweep passes A over.
	returnAcross(t, d, without, a, when, nil)
	m.check("A back", gained)
	m.set(ofA, "v3")
	m.del(ofA[:len(ofA)/3])
	m.check("written again", ofA)
}

// returnAcross applies the configuration yaml to d's proxy as Reload
// does, with the return of the server at a, down, when says: between the
// preparing and the commit, by the running pool's probe or the prepared
// pool's first, or after the commit. before, if not nil, runs with the
// pool replaced just before the commit. It returns the pool replaced.
func returnAcross(t *testing.T, d *doublePool, yaml, a, when string, before func(old *pool)) *pool {
	t.Helper()
	cfg, err := ParseConfig([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	old := d.p
	d.s.mu.Lock()
	tr, sources, err := d.s.prepareSourced(context.Background(), cfg.WithDefaults())
	if err != nil {
		d.s.mu.Unlock()
		t.Fatal(err)
	}
	next := tr.pools[0].next
	switch when {
	case "while prepared, the running pool's probe first":
		old.checks.restore(backendAt(old.backends, a))
		next.checks.restore(backendAt(next.backends, a))
	case "while prepared, the prepared pool's probe first":
		next.checks.restore(backendAt(next.backends, a))
		old.checks.restore(backendAt(old.backends, a))
	}
	if before != nil {
		before(old)
	}
	d.s.commit(tr)
	sources.commit()
	d.s.mu.Unlock()
	d.p = d.s.testPool("p")
	if d.p != next {
		t.Fatal("the change kept the pool")
	}
	if b := backendAt(d.p.backends, a); b.health.isDown() {
		d.p.checks.restore(b) // the probe after the commit
	}
	if backendAt(d.p.backends, a).health.isDown() {
		t.Fatal("A not restored")
	}
	return old
}
