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
			var bKeys []string
			for _, k := range testKeys("standin", 1500) {
				if ownerOf(d.p, k) == b.addr {
					bKeys = append(bKeys, k)
				}
			}
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
		t.Errorf("%s: of %d keys written while B was out, %d read as a miss and %d an older value", when, len(keys), missing, older)
	}
}
