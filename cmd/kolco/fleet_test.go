package main

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/membership/etcdtest"
)

// etcdFleet is three proxies on one etcd prefix over four memcached, placing
// by a history-dependent distribution whose state the store keeps.
type etcdFleet struct {
	srv     *etcdtest.Server
	prefix  string
	servers []string
	proxies []*fleetProxy
	rev     int64 // of the last change
}

const fleetDistribution = "jumpback"

func startFleet(t *testing.T) *etcdFleet {
	t.Helper()
	f := &etcdFleet{srv: etcdtest.Start(t, etcdtest.Config{}), prefix: "/kolco/" + t.Name() + "/"}
	for i := range 4 {
		f.servers = append(f.servers, startMemcached(t))
		f.rev = membersDo(t, f.srv, f.prefix, "add", fmt.Sprintf("m%d", i), "--addr", f.servers[i])
	}
	f.rev = membersDo(t, f.srv, f.prefix, "state", "--init", fleetDistribution)
	for range 3 {
		f.addProxy(t)
	}
	return f
}

func (f *etcdFleet) addProxy(t *testing.T) *fleetProxy {
	t.Helper()
	return f.addProxyVia(t, f.srv.Endpoint)
}

// addProxyVia starts a proxy of the fleet that reaches etcd at endpoint.
func (f *etcdFleet) addProxyVia(t *testing.T, endpoint string) *fleetProxy {
	t.Helper()
	fp := startFleetProxy(t, endpoint, f.prefix, fleetDistribution, f.servers[0])
	f.proxies = append(f.proxies, fp)
	return fp
}

// status runs "kolco status" on the fleet's proxies.
func (f *etcdFleet) status(t *testing.T, extra ...string) (int, string, string) {
	t.Helper()
	args := []string{"status", "--timeout", "2s"}
	for _, fp := range f.proxies {
		args = append(args, "--proxy", fp.admin)
	}
	return runCLI(t, "", append(args, extra...)...)
}

// fleetKeys returns n keys tagged with a round.
func fleetKeys(round string, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s:user:%d", round, i)
	}
	return keys
}

// checkShared sets 10,000 keys through one proxy and reads them through
// each of the others: all of them, when the proxies agree.
func (f *etcdFleet) checkShared(t *testing.T, round string, writer int) {
	t.Helper()
	keys := fleetKeys(round, 10000)
	setKeys(t, f.proxies[writer].listen, keys)
	for i, fp := range f.proxies {
		if i == writer {
			continue
		}
		if hits := countHits(t, fp.listen, keys); hits != len(keys) {
			t.Errorf("%s: %d of %d keys written through proxy %d read through proxy %d", round, hits, len(keys), writer, i)
		}
	}
}

// TestFleetOfProxiesAgrees: three proxies on one etcd prefix share the
// keys written through any of them; after each of 20 "kolco members" adds
// and removes all three report one fingerprint (the time until they do is
// printed); "kolco status" reports their agreement; a proxy started after
// the history of changes places as they do.
func TestFleetOfProxiesAgrees(t *testing.T) {
	t.Parallel() // mostly waits: on failure detectors, leases and watches, not on the CPU
	f := startFleet(t)
	agreeAt(t, f.rev, time.Now(), f.proxies...)
	f.checkShared(t, "before", 0)
	for _, addr := range f.servers {
		if n := itemsOn(t, addr); n == 0 {
			t.Errorf("memcached %s holds none of the keys: the proxies do not place on the store's nodes", addr)
		}
	}

	var took []time.Duration
	for i := range 20 {
		node := fmt.Sprintf("m%d", 1+i/2%3)
		op := []string{"remove", node}
		if i%2 == 1 {
			op = []string{"add", node, "--addr", f.servers[1+i/2%3]}
		}
		start := time.Now()
		rev := membersDo(t, f.srv, f.prefix, op...)
		_, d := agreeAt(t, rev, start, f.proxies...)
		took = append(took, d)
	}
	f.rev = membersDo(t, f.srv, f.prefix, "remove", "m2")
	agreed, _ := agreeAt(t, f.rev, time.Now(), f.proxies...)
	sorted := slices.Sorted(slices.Values(took))
	t.Logf("3 proxies, 20 changes (kolco members add/remove): all reported one fingerprint %v after the change at the slowest, %v median, %v fastest (from the command's start)",
		sorted[len(sorted)-1].Round(time.Millisecond), sorted[len(sorted)/2].Round(time.Millisecond), sorted[0].Round(time.Millisecond))
	f.checkShared(t, "after", 1)

	code, out, errs := f.status(t)
	t.Logf("kolco status:\n%s", out)
	if code != 0 || !strings.Contains(out, "pool p: all 3 proxies agree: fingerprint "+agreed) {
		t.Errorf("kolco status: exit %d\n%s%s", code, out, errs)
	}

	late := f.addProxy(t)
	if fp, _ := agreeAt(t, f.rev, time.Now(), f.proxies...); fp != agreed {
		t.Errorf("the late proxy agrees on %s, the others were on %s", fp, agreed)
	}
	if pm, _ := late.membership(t); !pm.Shared {
		t.Errorf("late proxy: %+v, want its placement reported as shared (the store keeps the state)", pm)
	}
	f.checkShared(t, "late", 3)
	if code, out, errs := f.status(t); code != 0 || !strings.Contains(out, "all 4 proxies agree") {
		t.Errorf("kolco status with the late proxy: exit %d\n%s%s", code, out, errs)
	}
}

// TestFleetPausedProxy: a proxy paused (SIGSTOP) during changes is named
// by "kolco status" as not answering; resumed, it converges with the
// others without a restart, and the fleet agrees again.
func TestFleetPausedProxy(t *testing.T) {
	t.Parallel() // mostly waits: on failure detectors, leases and watches, not on the CPU
	f := startFleet(t)
	agreeAt(t, f.rev, time.Now(), f.proxies...)
	paused := f.proxies[2]
	if err := paused.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	f.rev = membersDo(t, f.srv, f.prefix, "remove", "m3")
	f.rev = membersDo(t, f.srv, f.prefix, "add", "m3", "--addr", f.servers[3], "--weight", "1")
	f.rev = membersDo(t, f.srv, f.prefix, "remove", "m1")
	running, _ := agreeAt(t, f.rev, time.Now(), f.proxies[:2]...)
	code, out, errs := f.status(t)
	t.Logf("kolco status with one proxy paused:\n%s", out)
	if code != 1 || !strings.Contains(out, "agreement unknown: 2 of 3") || !hasLine(out, paused.admin, "did not answer") {
		t.Errorf("kolco status with %s paused: exit %d\n%s%s", paused.admin, code, out, errs)
	}

	resumed := time.Now()
	if err := paused.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	fp, took := agreeAt(t, f.rev, resumed, f.proxies...)
	if fp != running {
		t.Errorf("after the pause the fleet agrees on %s, the running proxies were on %s", fp, running)
	}
	t.Logf("a proxy paused during 3 changes agreed with the others %v after it was resumed", took.Round(time.Millisecond))
	f.checkShared(t, "resumed", 2)
	if code, out, errs := f.status(t); code != 0 || !strings.Contains(out, "all 3 proxies agree") {
		t.Errorf("kolco status after the resume: exit %d\n%s%s", code, out, errs)
	}
}
