package proxy

import (
	"context"
	"testing"
)

// TestOutageSurvivesAnotherServersRepoint: under rehash a server marked
// down has its keys written to stand-ins, and its return settles them
// from there. A failover of another server (Sentinel promoting a replica)
// is a change of the pool - a new pool with that server at its new
// address - made while the first is out, and the new pool takes the first
// one's journal over. A repoint places every key on the server of the
// same name as before, so the journal's stand-ins still hold the newest
// values; before, the new pool counted every key of the journal as unsure
// (see outage.placementChanged) and the return removed them from the
// stand-ins and from the server alike: every acknowledged write of the
// outage read as a miss (a Sentinel pool with auto_eject_hosts lost 518
// writes of an unaffected shard so, beside shard-b's failover).
func TestOutageSurvivesAnotherServersRepoint(t *testing.T) {
	t.Parallel()
	settings := "  distribution: ring\n  auto_eject_hosts: true\n  server_failure_limit: 1\n  timeout: 2000\n  server_retry_timeout: 3600000\n"
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	promoted := startRedis(t, 0)
	d := &doublePool{t: t, proto: "redis", s: startProxy(t, redisPoolYAML(settings, rs...))}
	d.p = d.s.testPool("p")
	d.redial()

	x, stayer := backendNamed(d.p.backends, "r0"), backendNamed(d.p.backends, "r1")
	var xKeys []string
	for _, k := range testKeys("repoint", 1500) {
		if ownerOf(d.p, k) == x.addr {
			xKeys = append(xKeys, k)
		}
	}
	d.setAll(xKeys, "v1")
	x.fail(ErrConnLost, 1)
	if !x.health.isDown() {
		t.Fatal("r0 not marked down")
	}
	// The keys whose stand-in is r1, which the repoint leaves as it is:
	// the newest value of each is there, and nowhere else.
	var kept []string
	for _, k := range xKeys {
		if ownerOf(d.p, k) == stayer.addr {
			kept = append(kept, k)
		}
	}
	if len(kept) < 50 {
		t.Fatalf("only %d of r0's %d keys stood in for by r1", len(kept), len(xKeys))
	}
	d.setAll(kept, "v2")

	// r2 fails over to another address while r0 is out.
	old := d.p
	if err := d.s.ReloadData(context.Background(), "test", []byte(redisPoolYAML(settings, rs[0], rs[1], promoted))); err != nil {
		t.Fatal(err)
	}
	d.p = d.s.testPool("p")
	if d.p == old || backendNamed(d.p.backends, "r2").addr != promoted.addr {
		t.Fatal("the repoint made no new pool")
	}
	nx := backendNamed(d.p.backends, "r0")
	if !nx.health.isDown() {
		t.Fatal("r0 is up in the new pool: the outage was not taken over")
	}
	d.p.checks.restore(nx)
	if nx.health.isDown() {
		t.Fatal("r0 not restored")
	}
	missing, older := 0, 0
	err := getMany(d.client, kept, func(_, v string, found bool) {
		switch {
		case !found:
			missing++
		case v != "v2":
			older++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if missing > 0 || older > 0 {
		t.Errorf("after r0's return: of the %d keys written while it was out, %d read as a miss and %d an older value", len(kept), missing, older)
	}
}
