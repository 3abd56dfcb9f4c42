package proxy

import (
	"os"
	"slices"
	"syscall"
	"testing"
)

// TestOutageWriteInFlightAsTheServerIsMarkedDown: a write of a server's
// key is sent to the server, which stalls; the server is marked down
// meanwhile, then answers, and the write is acknowledged. The write is
// noted in the outage once done, with the stand-in the key goes to then,
// which it never reached - and whose own copy of the key is older (here
// written to it directly, as a change that moved the key away leaves it).
// Before, that copy was trusted: read at the stand-in during the outage
// (the fence passed over a stand-in a write was noted with) and copied
// onto the server at its return, every such key read the stand-in's older
// value (a fault schedule's seed 117: a Redis cache under bounded, a
// server cut as a key of its was set). Now such a key is removed from the
// stand-in before a read, and from both at the return: it misses, or
// reads what was acknowledged. For memcached and Redis.
func TestOutageWriteInFlightAsTheServerIsMarkedDown(t *testing.T) {
	t.Parallel() // as its cases are, beside one another
	for _, proto := range []string{"memcached", "redis"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			runWriteInFlight(t, proto)
		})
	}
}

// startInflightPool starts a pool of four servers of proto under rehash,
// bounded, with a timeout no stall of the test reaches, and returns the
// servers' processes.
func startInflightPool(t *testing.T, proto string) (*doublePool, []*os.Process) {
	const settings = "  distribution: bounded\n  auto_eject_hosts: true\n  server_failure_limit: 1\n" +
		"  timeout: 30000\n  server_retry_timeout: 3600000\n"
	var procs []*os.Process
	d := &doublePool{t: t, proto: proto}
	var y string
	if proto == "redis" {
		rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
		y = redisPoolYAML(settings, rs...)
		for _, r := range rs {
			d.servers, procs = append(d.servers, r.addr), append(procs, r.cmd.Process)
		}
	} else {
		ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
		y = poolYAML(settings, ms...)
		for _, m := range ms {
			d.servers, procs = append(d.servers, m.addr), append(procs, m.cmd.Process)
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
	return d, procs
}

// plantStandInCopies writes val for each of keys, a's, to the server that
// stands in for a, directly.
func plantStandInCopies(t *testing.T, d *doublePool, a *backend, keys []string, val string) {
	pl := d.p.place.Load()
	down := make([]bool, len(pl.servers))
	for i, s := range pl.servers {
		down[i] = s == a
	}
	var sc routeScratch
	for _, k := range keys {
		s := pl.standInBy([]byte(k), &sc, down)
		sc2, err := dialKV(d.proto, s.addr)
		if err != nil {
			t.Fatal(err)
		}
		if err := sc2.set(k, val); err != nil {
			t.Fatal(err)
		}
		sc2.close()
	}
}

func runWriteInFlight(t *testing.T, proto string) {
	d, procs := startInflightPool(t, proto)
	a, keys := d.mostOwned(testKeys("inflight", 400))
	d.setAll(keys, "v1")
	plantStandInCopies(t, d, a, keys, "v0") // the stand-ins' own older copies

	// Writes sent to a, stalled; a marked down; a answers.
	stalled := procs[slices.Index(d.servers, a.addr)]
	if err := stalled.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stalled.Signal(syscall.SIGCONT) })
	sent := a.stats.requests.Load()
	acked := make(chan error, len(keys))
	for _, k := range keys {
		go func() {
			w, err := dialKV(proto, d.s.Addr("p").String())
			if err != nil {
				acked <- err
				return
			}
			defer w.close()
			acked <- w.set(k, "v2")
		}()
	}
	eventually(t, "the writes sent to the stalled server", func() bool {
		return a.stats.requests.Load()-sent >= uint64(len(keys))
	})
	a.fail(ErrConnLost, 1)
	if !a.health.isDown() {
		t.Fatal("not marked down")
	}
	if err := stalled.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for range keys {
		if err := <-acked; err != nil {
			t.Fatalf("a write sent before the server was marked down: %v", err)
		}
	}

	half := len(keys) / 2
	if n, ex := d.older(keys[:half], "v2"); n > 0 {
		t.Errorf("with the server out: %d of %d keys read an older value (%s)", n, half, ex)
	}
	d.p.checks.restore(a)
	if a.health.isDown() {
		t.Fatal("not restored")
	}
	if n, ex := d.older(keys, "v2"); n > 0 {
		t.Errorf("after its return: %d of %d keys read an older value (%s)", n, len(keys), ex)
	}
}
