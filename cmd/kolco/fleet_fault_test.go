package main

import (
	"context"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/membership/etcdtest"
)

// TestFleetWatchPastCompaction: a proxy cut off from etcd while the
// membership changes and the history is compacted reports its view stale,
// keeps serving it, and when it reaches etcd again reads the membership in
// full and agrees with the others, instead of skipping the gap.
func TestFleetWatchPastCompaction(t *testing.T) {
	t.Parallel() // mostly waits: on failure detectors, leases and watches, not on the CPU
	f := startFleet(t)
	cut := etcdtest.NewProxy(t, f.srv)
	behind := f.addProxyVia(t, cut.Endpoint)
	agreeAt(t, f.rev, time.Now(), f.proxies...)

	cut.Cut()
	eventually(t, "the cut-off proxy to report its view stale", func() bool {
		pm, ok := behind.membership(t)
		return ok && pm.Stale
	})
	f.rev = membersDo(t, f.srv, f.prefix, "remove", "m1")
	f.rev = membersDo(t, f.srv, f.prefix, "add", "m1", "--addr", f.servers[1])
	f.rev = membersDo(t, f.srv, f.prefix, "remove", "m3")
	agreeAt(t, f.rev, time.Now(), f.proxies[:3]...)
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{f.srv.Endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Compact(ctx, f.rev); err != nil {
		t.Fatal(err)
	}
	keys := fleetKeys("cut", 1000)
	setKeys(t, behind.listen, keys)
	if hits := countHits(t, behind.listen, keys); hits != len(keys) {
		t.Errorf("the cut-off proxy serves %d of %d keys set through it by its last view", hits, len(keys))
	}
	if pm, _ := behind.membership(t); pm.Revision >= f.rev {
		t.Fatalf("the cut-off proxy saw revision %d while cut off", pm.Revision)
	}

	restored := time.Now()
	cut.Restore()
	_, took := agreeAt(t, f.rev, restored, f.proxies...)
	pm, _ := behind.membership(t)
	if pm.Resyncs < 1 || slices.Contains(pm.Nodes, "m3") {
		t.Errorf("after the gap: %+v, want a full re-read without m3", pm)
	}
	t.Logf("a proxy cut off past a compaction re-read the membership in full (%d re-reads) and agreed %v after etcd was reachable again",
		pm.Resyncs, took.Round(time.Millisecond))
	f.checkShared(t, "after", 3)
}

// TestFleetLeaseExpiry: a memcached registered by a "kolco members
// register --ttl 2s" sidecar leaves every proxy's placement when the
// sidecar dies (SIGKILL: its lease is not revoked, only no longer
// renewed), within the TTL plus 2 s (the 2 s stretched by how many times
// over the machine's CPUs are asked for: at load 40 on 2 cores etcd's
// expiry alone took more), and the proxies agree.
func TestFleetLeaseExpiry(t *testing.T) {
	t.Parallel() // mostly waits: on failure detectors, leases and watches, not on the CPU
	const ttl = 2 * time.Second
	f := startFleet(t)
	extra := startMemcached(t)
	sidecar := program(t, "kolco", "members", "--endpoints", f.srv.Endpoint, "--prefix", f.prefix,
		"register", "--ttl", ttl.String(), "m9", extra)
	if err := sidecar.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = sidecar.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = sidecar.Process.Kill()
		<-exited
	})
	everywhere := func(want bool) func() bool {
		return func() bool {
			var fps []string
			for _, fp := range f.proxies {
				pm, ok := fp.membership(t)
				if !ok || slices.Contains(pm.Nodes, "m9") != want {
					return false
				}
				fps = append(fps, pm.Fingerprint)
			}
			return !slices.ContainsFunc(fps, func(s string) bool { return s != fps[0] })
		}
	}
	eventually(t, "the registered node placed by every proxy", everywhere(true))

	if err := sidecar.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	<-exited
	eventually(t, "the node gone from every proxy", everywhere(false))
	gone := time.Since(killed)
	t.Logf("a registered memcached left all 3 proxies' placement %v after its sidecar was killed (lease TTL %v)", gone.Round(time.Millisecond), ttl)
	if slack := time.Duration(busy() * float64(2*time.Second)); gone > ttl+slack {
		t.Errorf("removed %v after the sidecar died, more than the TTL %v plus %v", gone, ttl, slack)
	}
	f.checkShared(t, "expired", 1)
}

// TestFleetEtcdStopped: with etcd stopped the proxies keep serving their
// last view, alike, and report it stale ("kolco status" too, exiting 1,
// without calling it a disagreement); with etcd back they catch up with a change
// written then, without a restart.
func TestFleetEtcdStopped(t *testing.T) {
	t.Parallel() // mostly waits: on failure detectors, leases and watches, not on the CPU
	f := startFleet(t)
	agreed, _ := agreeAt(t, f.rev, time.Now(), f.proxies...)
	f.srv.Stop()
	stopped := time.Now()
	for _, fp := range f.proxies {
		eventually(t, "every proxy to report its view stale", func() bool {
			pm, ok := fp.membership(t)
			return ok && pm.Stale && pm.Fingerprint == agreed
		})
	}
	detected := time.Since(stopped)
	f.checkShared(t, "stopped", 2)
	code, out, errs := f.status(t)
	// Every proxy stale is a failure of the fleet's source: status says
	// so and exits 1, with each proxy's view still shown.
	if code != 1 || !strings.Contains(out, "all 3 proxies are stale") || strings.Count(out, "stale: ") != 3 ||
		!strings.Contains(errs, "every proxy is stale") {
		t.Errorf("kolco status with etcd stopped: exit %d\n%s%s", code, out, errs)
	}

	f.srv.Restart()
	back := time.Now()
	f.rev = membersDo(t, f.srv, f.prefix, "remove", "m2")
	fp, took := agreeAt(t, f.rev, back, f.proxies...)
	if fp == agreed {
		t.Errorf("after etcd came back the fleet still places by %s", fp)
	}
	t.Logf("etcd stopped: all 3 proxies reported stale within %v (check_interval 200ms); etcd back: all agreed on the change written then %v after it was restarted",
		detected.Round(time.Millisecond), took.Round(time.Millisecond))
}

// busy is realprog.Busy: a bound on how soon something happens is
// stretched by it, so that a busy machine makes a test slower, not failed.
func busy() float64 { return realprog.Busy() }
