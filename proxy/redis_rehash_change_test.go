package proxy

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestRedisRehashAfterAChangeReadsNoOldCopy: in a Redis cache pool under
// rehash, a server added by a change and then ejected has its keys read
// at their stand-ins - which, the change being cold, still hold the values
// of before it, older than those written to the added server since. A
// fault schedule (the long run's seed 53: a Redis cache, rehash, bounded,
// a static list; r4 added, then stopped until ejected) read 21 values
// older than writes acknowledged before. Here: ring over r0..r2, keys
// written, r3 added and the keys written again, r3 stopped until ejected:
// every key r3 took reads its value from before r3 came. Open: what a
// stand-in may serve is the outage's and the change's to settle
// (backend_outage.go is being changed for rehash's double failures);
// KOLCO_FAULTS_OPEN=1 runs it.
func TestRedisRehashAfterAChangeReadsNoOldCopy(t *testing.T) {
	if os.Getenv("KOLCO_FAULTS_OPEN") != "1" {
		t.Skip("open fault: an ejected server's keys are read from stand-ins holding a cold change's old copies (KOLCO_FAULTS_OPEN=1 runs it)")
	}
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	const extra = "  distribution: ring\n  auto_eject_hosts: true\n  ejection: rehash\n  timeout: 300\n  server_failure_limit: 1\n" +
		"  server_retry_timeout: 600000\n  health_check: {interval: 600000}\n"
	s := startProxy(t, redisPoolYAML(extra, rs[:3]...))
	c := dialRedis(t, s.Addr("p").String())
	const n = 200
	for i := range n {
		if got := c.do("SET", fmt.Sprintf("k:%d", i), "old"); got != "+OK\r\n" {
			t.Fatalf("SET: %q", got)
		}
	}
	reload(t, s, redisPoolYAML(extra, rs...)) // r3 joins: cold, the old copies stay
	var onR3 []string
	for i := range n {
		k := fmt.Sprintf("k:%d", i)
		if got := c.do("SET", k, "new"); got != "+OK\r\n" {
			t.Fatalf("SET: %q", got)
		}
		if ownerOf(s.testPool("p"), k) == rs[3].addr {
			onR3 = append(onR3, k)
		}
	}
	if len(onR3) == 0 {
		t.Fatal("no key on r3")
	}
	if err := rs[3].cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rs[3].cmd.Process.Signal(syscall.SIGCONT) })
	eventually(t, "r3 ejected", func() bool {
		c.do("GET", onR3[0]) // fails on r3, which is then ejected
		return ownerOf(s.testPool("p"), onR3[0]) != rs[3].addr
	})
	old := 0
	for _, k := range onR3 {
		if got := c.do("GET", k); strings.Contains(got, "old") {
			old++
		}
	}
	if old > 0 {
		t.Errorf("%d of the %d keys r3 took read their value from before r3 came, with r3 ejected", old, len(onR3))
	}
}
