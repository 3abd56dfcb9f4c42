package proxy

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReplicasBothDownRestored: two servers of a pool with two copies
// are down while keys are written - some with both their copies on them,
// written nowhere - and answer again: both are restored. A fault schedule
// (seed 125: memcached, two copies, fail-fast, etcd, dx; three servers of
// five out at once) found them kept down for good instead ("settling what
// it missed while it was out failed: no live servers: no server stands in
// for ...'s key", every 5 s for the minute watched), and a handover
// meanwhile forgot what they missed: 16 stale reads. Each one's return
// waits to copy a key from the other, which waits for it.
func TestReplicasBothDownRestored(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	var b strings.Builder
	b.WriteString("p:\n  listen: 127.0.0.1:0\n  distribution: ring\n  replicas: 2\n  ejection: fail-fast\n  timeout: 500\n" +
		"  server_failure_limit: 1\n  health_check: {interval: 50, timeout: 500}\n  servers:\n")
	for i, m := range ms {
		fmt.Fprintf(&b, "   - %s:1 m%d\n", m.addr, i)
	}
	s, logs := startProxyLogged(t, b.String())
	c := dial(t, s.Addr("p").String())
	keys := diffKeys(300)
	for _, m := range ms[:2] {
		if err := m.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
	down := func(i int) bool { return s.testPool("p").backends[i].health.isDown() }
	eventually(t, "m0 and m1 marked down", func() bool {
		for _, k := range keys[:20] {
			c.do("get " + k + "\r\n") // each copy tried fails
		}
		return down(0) && down(1)
	})
	for _, k := range keys {
		c.do("set " + k + " 0 0 3\r\nnew\r\n") // to the copies up; noted for those down
	}
	for _, m := range ms[:2] {
		if err := m.cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for down(0) || down(1) {
		if time.Now().After(deadline) {
			t.Fatalf("30 s after m0 and m1 answer again: m0 down %v, m1 down %v; the log:\n%s", down(0), down(1), logs.String())
		}
		time.Sleep(50 * time.Millisecond) // polling the servers' health
	}
}
