package proxy

import (
	"fmt"
	"testing"
)

// doublePool is a pool under rehash over four real servers of one
// protocol whose health a test drives itself: no probe and no retry
// restores a server it marked down, so each step happens when the test
// says.
type doublePool struct {
	t       *testing.T
	proto   string
	s       *Server
	p       *pool
	servers []string
	client  kvConn
}

func startDoublePool(t *testing.T, proto, dist string) *doublePool {
	settings := "  distribution: " + dist + "\n  auto_eject_hosts: true\n  server_failure_limit: 1\n" +
		"  timeout: 2000\n  server_retry_timeout: 3600000\n"
	if dist == "ketama" {
		settings += "  hash: fnv1a_64\n"
	}
	return startDoublePoolWith(t, proto, settings)
}

// startDoublePoolWith is startDoublePool with the pool's settings given.
func startDoublePoolWith(t *testing.T, proto, settings string) *doublePool {
	d := &doublePool{t: t, proto: proto}
	var y string
	if proto == "redis" {
		rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
		y = redisPoolYAML(settings, rs...)
		for _, r := range rs {
			d.servers = append(d.servers, r.addr)
		}
	} else {
		ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
		y = poolYAML(settings, ms...)
		for _, m := range ms {
			d.servers = append(d.servers, m.addr)
		}
	}
	d.s = startProxy(t, y)
	d.p = d.s.testPool("p")
	c, err := dialKV(proto, d.s.Addr("p").String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	d.client = c
	return d
}

// named returns the pool's servers by name (r0..r3 of a Redis pool).
func (d *doublePool) named() map[string]*backend {
	byName := map[string]*backend{}
	for _, b := range d.p.backends {
		byName[b.name()] = b
	}
	return byName
}

// markDown marks the server named name down, as a failed request does
// under server_failure_limit 1.
func (d *doublePool) markDown(name string) {
	d.t.Helper()
	b := d.named()[name]
	if b.fail(ErrConnLost, 1); !b.health.isDown() {
		d.t.Fatalf("%s not marked down", name)
	}
}

// restore restores the server named name, as its health check does.
func (d *doublePool) restore(name string) {
	d.t.Helper()
	b := d.named()[name]
	if d.p.checks.restore(b); b.health.isDown() {
		d.t.Fatalf("%s not restored", name)
	}
}

// setAll sets every key to val through the proxy, many requests sent
// before their replies are read (setMany).
func (d *doublePool) setAll(keys []string, val string) {
	d.t.Helper()
	if err := setMany(d.client, keys, func(string) string { return val }); err != nil {
		d.t.Fatal(err)
	}
}

// older counts the keys that read a value other than want through the
// proxy (a miss is no value: a cache refills it).
func (d *doublePool) older(keys []string, want string) (n int, example string) {
	d.t.Helper()
	err := getMany(d.client, keys, func(k, v string, found bool) {
		if found && v != want {
			if n == 0 {
				example = fmt.Sprintf("%s reads %q", k, v)
			}
			n++
		}
	})
	if err != nil {
		d.t.Fatal(err)
	}
	return n, example
}

// copiesElsewhere counts the keys a server other than the one their
// reads go to holds a copy of.
func (d *doublePool) copiesElsewhere(keys []string) int {
	d.t.Helper()
	n := 0
	for _, addr := range d.servers {
		c, err := dialKV(d.proto, addr)
		if err != nil {
			d.t.Fatal(err)
		}
		var others []string
		for _, k := range keys {
			if ownerOf(d.p, k) != addr {
				others = append(others, k)
			}
		}
		err = getMany(c, others, func(_, _ string, found bool) {
			if found {
				n++
			}
		})
		c.close()
		if err != nil {
			d.t.Fatal(err)
		}
	}
	return n
}

// ownedBy returns the keys, of n made with prefix, whose reads go to b.
func (d *doublePool) ownedBy(b *backend, prefix string, n int) []string {
	var keys []string
	for _, k := range testKeys(prefix, n) {
		if ownerOf(d.p, k) == b.addr {
			keys = append(keys, k)
		}
	}
	return keys
}

// mostOwned returns the server a read of most of keys goes to, and those
// keys.
func (d *doublePool) mostOwned(keys []string) (*backend, []string) {
	by := map[string][]string{}
	best := ""
	for _, k := range keys {
		o := ownerOf(d.p, k)
		by[o] = append(by[o], k)
		if best == "" || len(by[o]) > len(by[best]) {
			best = o
		}
	}
	return backendAt(d.p.backends, best), by[best]
}

// TestDoubleFailureServesNoStaleValue: two servers out at once under
// rehash, A and then B, where B stood in for some of A's keys while A was
// out, and both back in either order. Each return settles every key the
// returning server would serve from then on - its own, and those it
// stands in for while the other is still out - from the newest
// acknowledged copy, and removes its copies of the keys it does not
// serve: no read after either return gives a value older than the last
// one written, and once both are back no server but the one a key's reads
// go to holds a copy of it, so a later failure of A finds none of the
// stand-ins' old copies. For memcached and Redis, and the three ways a
// stand-in is found: nutcracker's placement rebuilt over the servers up
// (ketama), and a kolco placement's preference list walked past the
// servers down, of a stateless algorithm (ring, maglev, power) and of a
// history-dependent one (jump).
func TestDoubleFailureServesNoStaleValue(t *testing.T) {
	t.Parallel()
	for _, proto := range []string{"memcached", "redis"} {
		for _, dist := range []string{"ketama", "ring", "maglev", "power", "jump"} {
			for _, order := range []string{"B back first", "A back first"} {
				t.Run(proto+"/"+dist+"/"+order, func(t *testing.T) {
					t.Parallel()
					runDoubleFailure(t, proto, dist, order == "A back first")
				})
			}
		}
	}
}

func runDoubleFailure(t *testing.T, proto, dist string, aFirst bool) {
	d := startDoublePool(t, proto, dist)
	keys := testKeys("double:"+dist, 1200)
	d.setAll(keys, "v1")
	a, aKeys := d.mostOwned(keys)
	a.fail(ErrConnLost, 1)
	if !a.health.isDown() {
		t.Fatal("A not marked down")
	}
	d.setAll(aKeys, "v2") // to A's stand-ins
	b, bStood := d.mostOwned(aKeys)
	if len(bStood) < 10 {
		t.Fatalf("the busiest stand-in took %d of A's %d keys: too few to check", len(bStood), len(aKeys))
	}
	b.fail(ErrConnLost, 1)
	d.setAll(aKeys, "v3") // to the stand-ins of both
	steps := []*backend{b, a}
	if aFirst {
		steps = []*backend{a, b}
	}
	for _, back := range steps {
		d.p.checks.restore(back)
		if back.health.isDown() {
			t.Fatalf("%s not restored", back.addr)
		}
		if n, ex := d.older(aKeys, "v3"); n > 0 {
			t.Errorf("after %s came back: %d of A's %d keys read an older value (%s)", back.addr, n, len(aKeys), ex)
		}
	}
	eventually(t, "the stand-ins' copies of A's keys removed", func() bool { return d.copiesElsewhere(aKeys) == 0 })
	d.setAll(aKeys, "v4")
	a.fail(ErrConnLost, 1)
	if n, ex := d.older(aKeys, "v4"); n > 0 {
		t.Errorf("A out again: %d of A's %d keys read a stand-in's old copy (%s)", n, len(aKeys), ex)
	}
}

// TestReplicasDoubleFailure: a pool of two copies per key whose copies
// are both marked down, one after the other, with a write acknowledged
// by the second while the first was out and one that reached neither;
// both back in either order, each while the other is still out and its
// server up (a stalled server that answers again before it is restored).
// No read after either return gives a value older than the one
// acknowledged, and neither return waits for the other: a copy that
// cannot learn the newest value from a copy that is up drops its own, as
// a cache may miss. (A Redis pool keeps one copy of each key.)
func TestReplicasDoubleFailure(t *testing.T) {
	t.Parallel()
	for _, order := range []string{"second back first", "first back first"} {
		t.Run(order, func(t *testing.T) {
			t.Parallel()
			d := startDoublePoolWith(t, "memcached", "  distribution: ring\n  replicas: 2\n  auto_eject_hosts: true\n"+
				"  server_failure_limit: 1\n  timeout: 2000\n  server_retry_timeout: 3600000\n")
			keys := testKeys("copies", 300)
			d.setAll(keys, "v1")
			var sc routeScratch
			owners := d.p.place.Load().route([]byte(keys[0]), true, &sc)
			x, y := owners[0], owners[1]
			var both []string // the keys whose copies are x and y
			for _, k := range keys {
				o := d.p.place.Load().route([]byte(k), true, &sc)
				if (o[0] == x && o[1] == y) || (o[0] == y && o[1] == x) {
					both = append(both, k)
				}
			}
			x.fail(ErrConnLost, 1)
			d.setAll(both, "v2") // to y alone
			y.fail(ErrConnLost, 1)
			for _, k := range both { // reaches no copy
				if err := d.client.set(k, "v3"); err == nil {
					t.Fatalf("a write with both copies down succeeded")
				}
			}
			steps := []*backend{y, x}
			if order == "first back first" {
				steps = []*backend{x, y}
			}
			for _, back := range steps {
				d.p.checks.restore(back)
				if back.health.isDown() {
					t.Fatalf("%s stays down while the other copy is out", back.addr)
				}
				if n, ex := d.older(both, "v2"); n > 0 {
					t.Errorf("after %s came back: %d of %d keys read an older value (%s)", back.addr, n, len(both), ex)
				}
			}
		})
	}
}
