package proxy

import (
	"fmt"
	"testing"
)

// TestReturnAcrossAPreparedChange: a memcached pool under rehash with
// warm changes and a sweep, whose server A is out while two changes come:
// "add m0", which gives m0 some of A's keys, then "remove m0", which gives
// them back to A. A holds copies of those keys from before it went out,
// older than what m0 took since; and keys of A's own were written to its
// stand-in m0 meanwhile. A comes back after the second change is
// committed, or while it is prepared - the running pool's probe first, or
// the prepared pool's, which shares A's outage. Whichever pool settles
// its return, no read after it returns a value older than the last one
// acknowledged (a delete included). Before, A served its copies of the
// keys the change gave back to it: the change's presweep passed A over
// as it was down, and its journal did not name them (the fault schedule's
// seed 879: 3 to 21 stale reads per replay); and a return settled by the
// prepared pool left the stand-in m0's copies, as m0 was none of its
// servers, for its window to read once the running pool had deleted the
// keys at A.
func TestReturnAcrossAPreparedChange(t *testing.T) {
	t.Parallel() // as its cases are, beside one another
	for _, when := range []string{"after the commit", "while prepared, the running pool's probe first", "while prepared, the prepared pool's probe first"} {
		t.Run(when, func(t *testing.T) {
			t.Parallel()
			runReturnAcrossPreparedChange(t, when)
		})
	}
}

// acrossChange is the pool of TestReturnAcrossAPreparedChange once m0 is
// added while A is out: A's address, the configuration without m0, and
// the keys written - A's of before, those m0 takes from it, and those of
// A's its stand-in m0 took.
type acrossChange struct {
	d                    *doublePool
	m                    *cacheModel
	a, without           string
	ofA, gained, stoodIn []string
}

func startAcrossChange(t *testing.T) *acrossChange {
	settings := "  distribution: ring\n  auto_eject_hosts: true\n  server_failure_limit: 1\n  timeout: 2000\n" +
		"  server_retry_timeout: 3600000\n  warm: {enabled: true}\n  sweep: {exclusive: [\"*\"]}\n"
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	m0 := ms[0].addr
	c := &acrossChange{a: ms[2].addr, without: poolYAML(settings, ms[1:]...)}
	d := &doublePool{t: t, proto: "memcached", s: startProxy(t, c.without)}
	d.p = d.s.testPool("p")
	d.redial()
	c.d, c.m = d, newCacheModel(d)
	for _, k := range testKeys("prepared-return", 3000) {
		if ownerOf(d.p, k) == c.a {
			c.ofA = append(c.ofA, k)
		}
	}
	c.m.set(c.ofA, "v1")
	backendAt(d.p.backends, c.a).fail(ErrConnLost, 1)
	if !backendAt(d.p.backends, c.a).health.isDown() {
		t.Fatal("A not marked down")
	}
	reload(t, d.s, poolYAML(settings, ms...)) // m0 added while A is out
	d.p = d.s.testPool("p")
	for _, k := range c.ofA {
		switch {
		case configuredOwnerOf(d.p, k) == m0:
			c.gained = append(c.gained, k)
		case ownerOf(d.p, k) == m0:
			c.stoodIn = append(c.stoodIn, k)
		}
	}
	if len(c.gained) < 20 || len(c.stoodIn) < 20 {
		t.Fatalf("%d keys of A's go to m0 and %d stood in for there: too few to check", len(c.gained), len(c.stoodIn))
	}
	c.m.set(c.gained, "v2")
	c.m.set(c.stoodIn, "v2")
	c.m.del(c.gained[:len(c.gained)/2])
	return c
}

func runReturnAcrossPreparedChange(t *testing.T, when string) {
	c := startAcrossChange(t)
	d, m, a := c.d, c.m, c.a
	gained, stoodIn, ofA := c.gained, c.stoodIn, c.ofA

	// m0 removed: prepared while A is out, as Reload does, with A's
	// return between the preparing and the commit.
	old := returnAcross(t, d, c.without, a, when, func(old *pool) {
		if !backendAt(old.backends, a).health.isDown() {
			m.del(stoodIn[:len(stoodIn)/2]) // at A, through the running pool
		}
	})
	if backendAt(old.backends, a).health.isDown() {
		m.del(stoodIn[:len(stoodIn)/2])
	}
	m.check("A back", gained, stoodIn)
	m.set(ofA, "v3")
	m.del(ofA[:len(ofA)/3])
	m.check("written again", ofA)
}

// cacheModel is what one client acknowledged of each key, through d's
// proxy: the last value written, or "" once deleted. A read is right
// when it misses (a cache refills it) or returns that value.
type cacheModel struct {
	d    *doublePool
	last map[string]string
}

func newCacheModel(d *doublePool) *cacheModel {
	return &cacheModel{d: d, last: map[string]string{}}
}

func (m *cacheModel) set(keys []string, val string) {
	m.d.t.Helper()
	m.d.setAll(keys, val)
	for _, k := range keys {
		m.last[k] = val
	}
}

func (m *cacheModel) del(keys []string) {
	t := m.d.t
	t.Helper()
	c, ok := m.d.client.(*mcKV)
	if !ok {
		t.Fatal("not a memcached client")
	}
	for _, k := range keys {
		if _, err := fmt.Fprintf(c.c, "delete %s\r\n", k); err != nil {
			t.Fatal(err)
		}
		line, err := c.r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line != "DELETED\r\n" && line != "NOT_FOUND\r\n" {
			t.Fatalf("delete %s: %q", k, line)
		}
		m.last[k] = ""
	}
}

// check reads each key of the sets through the proxy and fails the test
// for each read of a value other than the last acknowledged.
func (m *cacheModel) check(stage string, sets ...[]string) {
	t := m.d.t
	t.Helper()
	n, reads, example := 0, 0, ""
	for _, keys := range sets {
		for _, k := range keys {
			v, found, err := m.d.client.get(k)
			if err != nil {
				t.Fatalf("get %s: %v", k, err)
			}
			reads++
			if found && v != m.last[k] {
				if n == 0 {
					example = fmt.Sprintf("%s reads %q, last acknowledged %q", k, v, m.last[k])
				}
				n++
			}
		}
	}
	if n > 0 {
		t.Errorf("%s: %d of %d reads older than the last value acknowledged (%s)", stage, n, reads, example)
	}
}
