package proxy

import "testing"

// TestReturnWithAStandInOut: under rehash B is out and its keys are
// written to stand-ins, one of which, X, is out too when B returns (a
// Sentinel pool with auto_eject_hosts and server_failure_limit 1 on a
// loaded machine: shard-b failed over, another shard marked down by a
// timeout). Every write of the outage is read back, after B's return and
// after X's. Before, two orderings lost them:
//
//   - X marked down after it took B's keys: B's return found the newest
//     value of each on no server up and removed the key: every one X
//     took read as a miss; now B's return reads them from X, which
//     answers.
//   - X out before the writes, which went to the third server: B's
//     return settled them, and noted them in X's outage as keys B stands
//     in for, as it did while B was out - so X's return removed B's own
//     newest copies: about half of B's keys (those X is the first
//     stand-in of) read as misses.
func TestReturnWithAStandInOut(t *testing.T) {
	t.Parallel() // as its cases are, beside one another
	for _, tc := range []struct {
		name        string
		xDownBefore bool
	}{
		{"stand-in marked down after the writes", false},
		{"stand-in out before the writes", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			settings := "  distribution: ring\n  auto_eject_hosts: true\n  server_failure_limit: 1\n  timeout: 2000\n  server_retry_timeout: 3600000\n"
			rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
			d := &doublePool{t: t, proto: "redis", s: startProxy(t, redisPoolYAML(settings, rs...))}
			d.p = d.s.testPool("p")
			c, err := dialKV("redis", d.s.Addr("p").String())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.close)
			d.client = c

			b := backendNamed(d.p.backends, "r1")
			bKeys := d.ownedBy(b, "standin", 1500)
			x := backendNamed(d.p.backends, "r0")
			if tc.xDownBefore {
				x.fail(ErrConnLost, 1)
			}
			b.fail(ErrConnLost, 1)
			if !tc.xDownBefore {
				x, _ = d.mostOwned(bKeys) // the stand-in of the most of them
			}
			d.setAll(bKeys, "v2")
			if !tc.xDownBefore {
				x.fail(ErrConnLost, 1)
			}
			if !x.health.isDown() || !b.health.isDown() {
				t.Fatal("not both out")
			}
			d.p.checks.restore(b)
			if b.health.isDown() {
				t.Fatal("B not restored")
			}
			checkRead(t, c, bKeys, "v2", "after B's return")
			d.p.checks.restore(x)
			if x.health.isDown() {
				t.Fatal("X not restored")
			}
			checkRead(t, c, bKeys, "v2", "after X's return")
		})
	}
}

// checkRead checks that every one of keys reads want through c.
func checkRead(t *testing.T, c kvConn, keys []string, want, when string) {
	t.Helper()
	missing, older := 0, 0
	err := getMany(c, keys, func(_, v string, found bool) {
		switch {
		case !found:
			missing++
		case v != want:
			older++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if missing > 0 || older > 0 {
		t.Errorf("%s: of %d keys written, %d read as a miss and %d an older value", when, len(keys), missing, older)
	}
}

// TestStandInsReturnReadsNoStandInOut: a server C that stands in for O's
// keys is out with O, and their writes go to a third, A, which goes out
// too. O returns and takes its keys' values from A (see
// TestReturnWithAStandInOut); they are written again on O, O goes out
// again, and C returns. C's journal holds the keys with A alone, but the
// writes on O went unnoted in it, O being up: A's copies are older than
// O's, and C's return takes none of them. Every read after it gives the
// value written on O or a miss, and once O is back, O's. (Read from A,
// C's return served the older value: the outage model's seed 2, "read 1,
// the last acknowledged 3".)
func TestStandInsReturnReadsNoStandInOut(t *testing.T) {
	t.Parallel() // as its cases are, beside one another
	for _, proto := range []string{"memcached", "redis"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			d := startDoublePool(t, proto, "ring")
			o := d.p.backends[1]
			oKeys := d.ownedBy(o, "standin-of", 2000)
			o.fail(ErrConnLost, 1)
			c, cKeys := d.mostOwned(oKeys)
			c.fail(ErrConnLost, 1)
			a, keys := d.mostOwned(cKeys)
			d.setAll(keys, "v1")
			a.fail(ErrConnLost, 1)
			d.restoreUp(o, "O")
			d.setAll(keys, "v2")
			o.fail(ErrConnLost, 1)
			d.restoreUp(c, "C")
			if n, ex := d.older(keys, "v2"); n > 0 {
				t.Errorf("after C's return: %d of %d keys read an older value than O's (%s)", n, len(keys), ex)
			}
			d.restoreUp(o, "O")
			checkRead(t, d.client, keys, "v2", "after O's second return")
			d.restoreUp(a, "A")
			checkRead(t, d.client, keys, "v2", "after A's return")
		})
	}
}

// TestLaterStandInsReturnKeepsTheEarlierOnes: O's keys' stand-ins B and
// then D are out with O, and their writes go to a third server. B returns
// first and takes them: it serves them while O is out, D's return after
// it does not take them back, and nothing of theirs is removed from B.
// Before, B's return noted them in D's outage as keys it stands in for,
// judged with B still out, and D's return removed B's copies: every one
// read as a miss.
func TestLaterStandInsReturnKeepsTheEarlierOnes(t *testing.T) {
	t.Parallel()
	d := startDoublePool(t, "redis", "ring")
	o := d.p.backends[2]
	oKeys := d.ownedBy(o, "later-standin", 2000)
	o.fail(ErrConnLost, 1)
	b, bKeys := d.mostOwned(oKeys)
	b.fail(ErrConnLost, 1)
	dd, keys := d.mostOwned(bKeys)
	dd.fail(ErrConnLost, 1)
	d.setAll(keys, "v2")
	d.restoreUp(b, "B")
	checkRead(t, d.client, keys, "v2", "after B's return")
	d.restoreUp(dd, "D")
	checkRead(t, d.client, keys, "v2", "after D's return")
	d.restoreUp(o, "O")
	checkRead(t, d.client, keys, "v2", "after O's return")
}

// restoreUp restores b as its health checks do once it answers, and fails
// the test if it stays down.
func (d *doublePool) restoreUp(b *backend, name string) {
	d.t.Helper()
	d.p.checks.restore(b)
	if b.health.isDown() {
		d.t.Fatalf("%s (%s) not restored", name, b.addr)
	}
}
