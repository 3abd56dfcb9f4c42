package main

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
	"github.com/kolco-dev/kolco/membership/etcdtest"
)

// TestProxyHandoverGossip: a kolco proxy process on an encrypted gossip
// pool of four memcached and their sidecars is handed over (SIGUSR2). The
// new process cannot bind the gossip address until the old one has left
// the pool; meanwhile it serves the nodes the old one served (never the
// configured server), then joins and follows the pool: every key written
// before reads back through it, and a sidecar that leaves after is served
// as the Go follower of the pool serves it.
func TestProxyHandoverGossip(t *testing.T) {
	f := startGossipFleet(t, 0)
	ports := realprog.FreePorts(t, 3)
	fp := &fleetProxy{listen: fmt.Sprintf("127.0.0.1:%d", ports[0]), admin: fmt.Sprintf("127.0.0.1:%d", ports[1])}
	p := startPidProxy(t, fmt.Sprintf("kolco:\n  admin_listen: %s\np:\n  listen: %s\n  distribution: ring\n  timeout: 10000\n"+
		"  servers:\n   - %s:1 static\n  membership:\n    gossip: {bind: \"127.0.0.1:%d\", seeds: [%s], key_file: %s, %s}\n",
		fp.admin, fp.listen, startMemcached(t), ports[2], strings.Join(f.seeds, ", "), f.keyFile, f.tuning.yaml()), ports[:2]...)
	all := []string{"m0", "m1", "m2", "m3"}
	before, _ := f.agree(t, time.Now(), []*fleetProxy{fp}, all...)
	keys := fleetKeys("handover", 2000)
	setKeys(t, fp.listen, keys)

	old := readPid(p.pid)
	start := time.Now()
	if err := testproc.KillOwn(old, syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	// Until the old process has exited and the new one's member is
	// current, whichever process answers serves the four nodes.
	stale := 0
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) { // polling on other processes
		if time.Now().After(deadline) {
			t.Fatal("no new process serving the pool's view, current, 30 s after SIGUSR2")
		}
		pm, ok := fp.membership(t)
		if !ok {
			continue
		}
		if !slices.Equal(pm.Nodes, all) || pm.Fingerprint != before {
			t.Fatalf("during the handover the pool serves %v (%s), want %v (%s)", pm.Nodes, pm.Fingerprint, all, before)
		}
		if pm.Stale {
			stale++
			continue
		}
		if readPid(p.pid) != old && isDone(p.exited) {
			break
		}
	}
	t.Logf("handed over: the new process current %v after SIGUSR2 (%d answers said stale meanwhile)", time.Since(start).Round(time.Millisecond), stale)
	if hits := countHits(t, fp.listen, keys); hits != len(keys) {
		t.Errorf("%d of %d keys written before the handover read after it", hits, len(keys))
	}
	f.stop(t, "m3", syscall.SIGTERM)
	f.agree(t, time.Now(), []*fleetProxy{fp}, "m0", "m1", "m2")
}

// TestProxyHandoverEtcd: a kolco proxy process on etcd is handed over
// (SIGUSR2). The new process says it serves only once its pool serves
// etcd's version, so the pool, asked every millisecond through the
// admin socket both processes share, never shows the configured server.
func TestProxyHandoverEtcd(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Config{})
	prefix := "/kolco/" + t.Name() + "/"
	var all []string
	for i := range 4 {
		membersDo(t, srv, prefix, "add", fmt.Sprintf("m%d", i), "--addr", startMemcached(t))
		all = append(all, fmt.Sprintf("m%d", i))
	}
	ports := realprog.FreePorts(t, 2)
	fp := &fleetProxy{listen: fmt.Sprintf("127.0.0.1:%d", ports[0]), admin: fmt.Sprintf("127.0.0.1:%d", ports[1])}
	p := startPidProxy(t, fmt.Sprintf("kolco:\n  admin_listen: %s\np:\n  listen: %s\n  distribution: ring\n  timeout: 10000\n"+
		"  servers:\n   - %s:1 static\n  membership:\n    etcd: {endpoints: [%q], prefix: %s, check_interval: 200}\n",
		fp.admin, fp.listen, startMemcached(t), srv.Endpoint, prefix), ports...)
	eventually(t, "the pool on etcd's nodes", func() bool {
		pm, ok := fp.membership(t)
		return ok && slices.Equal(pm.Nodes, all)
	})
	old := readPid(p.pid)
	if err := testproc.KillOwn(old, syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	answers := 0
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) { // polling on other processes
		if time.Now().After(deadline) {
			t.Fatal("no new process serving etcd's nodes 30 s after SIGUSR2")
		}
		pm, ok := fp.membership(t)
		if !ok {
			continue
		}
		answers++
		if !slices.Equal(pm.Nodes, all) {
			t.Fatalf("answer %d during the handover: the pool serves %v (stale %v), want %v", answers, pm.Nodes, pm.Stale, all)
		}
		if readPid(p.pid) != old && isDone(p.exited) {
			break
		}
	}
	t.Logf("handed over: %d answers, each etcd's four nodes", answers)
}

// isDone reports whether ch is closed.
func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
