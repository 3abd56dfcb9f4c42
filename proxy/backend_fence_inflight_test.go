package proxy

import (
	"fmt"
	"strings"
	"testing"
)

// TestRehashWriteInFlightAtEjection: a write routed to a server before it
// is marked down, and answered after, reached that server, not the
// stand-in its keys are read at from then on. The outage noted it as
// written to the stand-in, as if the stand-in held a value newer than any
// from before: so a read there did not remove the stand-in's own old copy
// (left by a cold change that moved the key from it), and read it; and
// the return copied that old copy over the server's newer one. A fault
// schedule (the long run's seed 120: a Redis cache, rehash, gossip,
// rendezvous; r4 added, then its link cut) read values older than writes
// acknowledged before. Here: ring over three redis-servers, keys written,
// a fourth added (cold) and stopped (SIGSTOP) while two SETs to it are in
// flight; it is marked down, then continued, and the SETs are answered.
// One key is read while the server is out, the other after its return:
// neither may read the value from before the fourth came.
func TestRehashWriteInFlightAtEjection(t *testing.T) {
	f := fenceRedis(t, "ring")
	yaml := func(n int) string {
		return strings.Replace(f.yaml(n), "timeout: 300", "timeout: 10000", 1)
	}
	s := startProxy(t, yaml(3))
	c := f.client(s)
	const n = 200
	for i := range n {
		if got := c.set(fmt.Sprintf("k:%d", i), "old"); got != c.ok {
			t.Fatalf("set: %q", got)
		}
	}
	reload(t, s, yaml(4)) // the fourth joins: cold, the old copies stay
	p := s.testPool("p")
	var onNew []string
	for i := range n {
		if k := fmt.Sprintf("k:%d", i); ownerOf(p, k) == f.addr(3) {
			onNew = append(onNew, k)
		}
	}
	if len(onNew) < 2 {
		t.Fatalf("%d keys on the fourth server", len(onNew))
	}
	readOut, readBack := onNew[0], onNew[1]
	fourth := p.backends[3]
	cont := f.stopUntil(3)
	sent := fourth.stats.requests.Load()
	var writers []*rc
	for _, k := range []string{readOut, readBack} {
		w := dialRedis(t, s.Addr("p").String())
		w.send("SET", k, "new")
		if err := w.w.Flush(); err != nil {
			t.Fatal(err)
		}
		writers = append(writers, w)
	}
	eventually(t, "both SETs written to the fourth server", func() bool { return fourth.stats.requests.Load() >= sent+2 })
	fourth.fail(ErrConnLost, 1) // another request's failure marks it down
	if !fourth.health.isDown() {
		t.Fatal("the fourth server is not marked down")
	}
	cont()
	for _, w := range writers {
		if got, err := w.read(); err != nil || got != "+OK\r\n" {
			t.Fatalf("SET in flight: %q %v", got, err)
		}
	}
	for round := range 2 {
		if got := c.get(readOut); strings.Contains(got, "old") {
			t.Errorf("read %d of %s with its server out: %q, older than the SET acknowledged before", round, readOut, got)
		}
	}
	p.checks.restore(fourth)
	if fourth.health.isDown() {
		t.Fatal("the fourth server not restored")
	}
	for _, k := range []string{readOut, readBack} {
		if got := c.get(k); strings.Contains(got, "old") {
			t.Errorf("%s after its server's return: %q, older than the SET acknowledged before", k, got)
		}
	}
}
