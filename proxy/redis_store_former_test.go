package proxy

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStoreRequestToAStalledRemovedServerTimesOut: a server removed from
// a store is, for the move that follows, a former server of the pool (see
// migrations.backendFor), and a request for a key still on it goes there
// first: a read on it, a MIGRATE off it. When that server stops answering
// (here SIGSTOP), the request must fail at the pool's timeout, as one to
// any server of the pool does. The watchdog that times requests out went
// through the pool's servers only, so the request waited for a reply for
// as long as the server stayed stopped, until the client's guard gave up.
func TestStoreRequestToAStalledRemovedServerTimesOut(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	later := laterHours() // the mover waits: the keys stay on the removed server
	yaml := func(servers []*redisServer) string {
		return "kolco:\n  admin_listen: 127.0.0.1:0\n" +
			redisPoolYAML("  distribution: ring\n  timeout: 300\n  store: {enabled: true, hours: \""+later+"\"}\n", servers...)
	}
	s := startProxy(t, yaml(rs))
	p := func() *pool { return s.testPool("p") }
	keys := fillStore(t, s.Addr("p").String(), 300)
	var onRemoved []string
	for _, k := range keys {
		if ownerOf(p(), k) == rs[2].addr {
			onRemoved = append(onRemoved, k)
		}
	}
	if len(onRemoved) < 2 {
		t.Fatalf("%d keys on the server removed: the test tests nothing", len(onRemoved))
	}
	reload(t, s, yaml(rs[:2]))
	eventually(t, "the move open", func() bool { m := moveOf(p().place.Load()); return m != nil && m.isOpen() })

	proc := rs[2].cmd.Process
	if err := proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proc.Signal(syscall.SIGCONT) })
	c := dialRedis(t, s.Addr("p").String())
	for _, args := range [][]string{{"GET", onRemoved[0]}, {"SET", onRemoved[1], "v2"}} {
		// The guard: some 30 times the pool's timeout, which a request
		// fails at, with the watchdog's tick and a busy machine's delay.
		c.setDeadline(time.Now().Add(10 * time.Second))
		c.send(args...)
		got, err := c.read()
		if err != nil {
			t.Fatalf("%q while its old server is stopped: no reply (%v)", args, err)
		}
		if !strings.HasPrefix(got, "-") {
			t.Errorf("%q while its old server is stopped: %q, want an error", args, got)
		}
		t.Logf("%q: %s", args, strings.TrimSpace(fmt.Sprint(got)))
	}
}
