package proxy

import (
	"context"
	"testing"
)

// TestOutageOpenedWhileAChangeIsPrepared: a change of the pool (a reload,
// or a membership source's version, which takes the same path) is
// prepared beside the running pool, which serves meanwhile. A server that
// pool marks down then has its keys written around it, noted in its
// outage; the pool committed must take the server as down, with what it
// missed, and settle that before it serves it. Before, the committed pool
// took each server's health as it was when the change was prepared: the
// server served again at once, every key written around it at its older
// value (found by the fault schedules: a server stalled as a membership
// change removed another). A server the replaced pool marks down after
// the commit, failing a request in flight, is marked down in its
// successor too. For a pool of two copies per key (bounded loads, as the
// schedule ran it) and of one (a ring, memcached and Redis).
func TestOutageOpenedWhileAChangeIsPrepared(t *testing.T) {
	t.Parallel() // as its cases are, beside one another
	for _, tc := range []struct{ name, proto, settings string }{
		{"memcached/bounded/2 copies", "memcached", "  distribution: bounded\n  replicas: 2\n"},
		{"memcached/ring", "memcached", "  distribution: ring\n"},
		{"redis/ring", "redis", "  distribution: ring\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runOutageWhilePrepared(t, tc.proto, tc.settings)
		})
	}
}

// startLeavingPool starts a pool of five servers of proto under rehash,
// and returns the configuration without the fifth and its address.
func startLeavingPool(t *testing.T, proto, settings string) (d *doublePool, after, leaving string) {
	settings += "  auto_eject_hosts: true\n  server_failure_limit: 1\n  timeout: 2000\n  server_retry_timeout: 3600000\n"
	var before string
	if proto == "redis" {
		rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
		before, after, leaving = redisPoolYAML(settings, rs...), redisPoolYAML(settings, rs[:4]...), rs[4].addr
	} else {
		ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
		before, after, leaving = poolYAML(settings, ms...), poolYAML(settings, ms[:4]...), ms[4].addr
	}
	d = &doublePool{t: t, proto: proto, s: startProxy(t, before)}
	d.p = d.s.testPool("p")
	d.redial()
	return d, after, leaving
}

func runOutageWhilePrepared(t *testing.T, proto, settings string) {
	d, after, leaving := startLeavingPool(t, proto, settings)
	var keys []string // those of the servers that stay
	for _, k := range testKeys("prepared", 1200) {
		if ownerOf(d.p, k) != leaving {
			keys = append(keys, k)
		}
	}
	d.setAll(keys, "v1")
	cfg, err := ParseConfig([]byte(after)) // the fifth server leaves
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	// Reload's steps, with the running pool marking a server down and a
	// client writing around it between the change's preparing and its
	// commit.
	old := d.p
	a, aKeys := d.mostOwned(keys)
	d.s.mu.Lock()
	tr, sources, err := d.s.prepareSourced(context.Background(), cfg.WithDefaults())
	if err != nil {
		d.s.mu.Unlock()
		t.Fatal(err)
	}
	a.fail(ErrConnLost, 1)
	d.setAll(aKeys, "v2")
	d.s.commit(tr)
	sources.commit()
	d.s.mu.Unlock()

	d.p = d.s.testPool("p")
	if d.p == old {
		t.Fatal("the reload kept the pool")
	}
	na := backendAt(d.p.backends, a.addr)
	if !na.health.isDown() {
		t.Errorf("the server the replaced pool marked down while the change was prepared is up in the new pool")
	}
	if n, ex := d.older(aKeys, "v2"); n > 0 {
		t.Errorf("after the commit: %d of its %d keys read an older value (%s)", n, len(aKeys), ex)
	}
	d.p.checks.restore(na)
	if na.health.isDown() {
		t.Fatal("not restored")
	}
	if n, ex := d.older(aKeys, "v2"); n > 0 {
		t.Errorf("after its return: %d of its %d keys read an older value (%s)", n, len(aKeys), ex)
	}

	checkDownAfterCommit(t, d, old, a, keys)
}

// checkDownAfterCommit marks down, in old, the pool d's replaced, the
// server other than a the most of keys are read from, and checks that it
// is down in d's, with its writes settled at its return.
func checkDownAfterCommit(t *testing.T, d *doublePool, old *pool, a *backend, keys []string) {
	var rest []string
	for _, k := range keys {
		if ownerOf(d.p, k) != a.addr {
			rest = append(rest, k)
		}
	}
	b, bKeys := d.mostOwned(rest)
	backendAt(old.backends, b.addr).fail(ErrConnLost, 1)
	if nb := backendAt(d.p.backends, b.addr); !nb.health.isDown() {
		t.Errorf("the server the replaced pool marked down after the commit is up in the new pool")
	} else if nb.outage.Load() == nil {
		t.Errorf("the server the replaced pool marked down after the commit has no outage journal in the new pool")
	}
	d.setAll(bKeys, "v3")
	d.p.checks.restore(backendAt(d.p.backends, b.addr))
	if n, ex := d.older(bKeys, "v3"); n > 0 {
		t.Errorf("after the second server's return: %d of its %d keys read an older value (%s)", n, len(bKeys), ex)
	}
}
