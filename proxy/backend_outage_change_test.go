package proxy

import (
	"context"
	"testing"
)

// TestReturnAfterAChangeMovedItsKeys: a Redis cache under rehash whose
// server A is out while a change (a server added) gives some of A's keys
// to the new server, which is written and then goes out itself. A's
// return settles the keys its journal noted - written to its stand-ins
// before the change - and, with the new owner out, A serves them from
// then on: it must not take the stand-ins' copies, older than what the
// new owner acknowledged after the change. Found by the fault schedule's
// seed 200 (jump, a server added while r1 was out, r4 stopped after):
// r1's return copied r3's copy from before the change, and three reads
// of r1 and then of r4, settled from r1, gave it after the newer write.
func TestReturnAfterAChangeMovedItsKeys(t *testing.T) {
	t.Parallel()
	settings := "  distribution: jump\n  auto_eject_hosts: true\n  server_failure_limit: 1\n  timeout: 2000\n  server_retry_timeout: 3600000\n"
	d, after := startFourOfFive(t, settings)
	a, aKeys := d.mostOwned(testKeys("moved", 2000))
	a.fail(ErrConnLost, 1)
	d.setAll(aKeys, "v1") // to A's stand-ins, noted in A's outage
	if err := d.s.Reload(context.Background(), after); err != nil {
		t.Fatal(err)
	}
	d.p = d.s.testPool("p")
	if !backendAt(d.p.backends, a.addr).health.isDown() {
		t.Fatal("A not down after the change")
	}
	var moved []string // A's keys the added server takes
	for _, k := range aKeys {
		if configuredOwnerOf(d.p, k) == d.servers[4] {
			moved = append(moved, k)
		}
	}
	if len(moved) < 10 {
		t.Fatalf("%d of A's %d keys move to the added server: too few to check", len(moved), len(aKeys))
	}
	aKeys = moved
	d.setAll(aKeys, "v2") // to the added server, their owner now
	added := backendAt(d.p.backends, d.servers[4])
	added.fail(ErrConnLost, 1)
	d.p.checks.restore(backendAt(d.p.backends, a.addr))
	if backendAt(d.p.backends, a.addr).health.isDown() {
		t.Fatal("A not restored")
	}
	if n, ex := d.older(aKeys, "v2"); n > 0 {
		t.Errorf("A back, the added server out: %d of %d keys read an older value than the one it acknowledged (%s)", n, len(aKeys), ex)
	}
	d.p.checks.restore(added)
	if n, ex := d.older(aKeys, "v2"); n > 0 {
		t.Errorf("both back: %d of %d keys read an older value (%s)", n, len(aKeys), ex)
	}
}

// TestReturnAfterAWriteLostAtTheStandIn: a Redis cache under rehash whose
// server A is out, and whose stand-in X holds an older copy of one of its
// keys (a change's leftover), fails the write of that key routed to it
// (X is down, marked down only after, and back later holding the copy). A's return must not take
// X's copy for the newest value: the write noted with X never reached
// it. Found by the fault schedule's seed 200 (jump, r4 out, its stand-in
// r2 cut as a write of r4's key went there; r4's return copied r2's copy
// from before the change, and the final read gave it after a newer write).
func TestReturnAfterAWriteLostAtTheStandIn(t *testing.T) {
	t.Parallel()
	// Two failures in a row mark a server down: the lost write is X's
	// first, noted before X's own outage opens.
	settings := "  distribution: ring\n  auto_eject_hosts: true\n  server_failure_limit: 2\n  timeout: 2000\n  server_retry_timeout: 3600000\n"
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	d := &doublePool{t: t, proto: "redis", s: startProxy(t, redisPoolYAML(settings, rs...))}
	d.p = d.s.testPool("p")
	d.redial()
	a, aKeys := d.mostOwned(testKeys("lost", 400))
	d.setAll(aKeys, "v1")
	a.fail(ErrConnLost, 1)
	a.fail(ErrConnLost, 1)
	if !a.health.isDown() {
		t.Fatal("A not marked down")
	}
	// X: the stand-in of most of A's keys; it goes away.
	x, keys := d.mostOwned(aKeys)
	var xs *redisServer
	for _, r := range rs {
		if r.addr == x.addr {
			xs = r
		}
	}
	xs.stop()
	keys = keys[:1]
	if err := d.client.set(keys[0], "v2"); err == nil {
		t.Fatalf("set %s to a stopped stand-in succeeded", keys[0])
	}
	x.fail(ErrConnLost, 1) // its second failure
	if !x.health.isDown() {
		t.Fatal("X not marked down")
	}
	// X back, holding older copies of A's keys.
	xs = startRedis(t, xs.port)
	direct := dialRedis(t, xs.addr)
	for _, k := range keys {
		direct.do("SET", k, "v0")
	}
	d.p.checks.restore(x)
	d.p.checks.restore(a)
	if a.health.isDown() || x.health.isDown() {
		t.Fatal("A or X not restored")
	}
	n := 0
	for _, k := range keys {
		if v, found, err := d.client.get(k); err != nil {
			t.Fatal(err)
		} else if found && v == "v0" {
			n++
		}
	}
	if n > 0 {
		t.Errorf("A back: %s reads the stand-in's older copy after v1 was acknowledged", keys[0])
	}
}

// startFourOfFive starts a Redis pool under settings over four of five
// real servers, and returns it with the configuration naming all five.
func startFourOfFive(t *testing.T, settings string) (*doublePool, *Config) {
	t.Helper()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	d := &doublePool{t: t, proto: "redis", s: startProxy(t, redisPoolYAML(settings, rs[:4]...))}
	for _, r := range rs {
		d.servers = append(d.servers, r.addr)
	}
	d.p = d.s.testPool("p")
	d.redial()
	after, err := ParseConfig([]byte(redisPoolYAML(settings, rs...)))
	if err != nil {
		t.Fatal(err)
	}
	return d, after
}
