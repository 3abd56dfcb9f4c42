package proxy

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/kolco-dev/kolco/internal/realprog"
)

// TestRehashAfterAChangeReadsNoOldCopy: in a pool under rehash, a server
// added by a cold change and then ejected has its keys read at their
// stand-ins - which, the change being cold, still hold the values of
// before it, older than those written to the added server since. A fault
// schedule (the long run's seed 53: a Redis cache, rehash, bounded, a
// static list; r4 added, then stopped until ejected) read 21 values older
// than writes acknowledged before. Here: ring over three servers, keys
// written, a fourth added and the keys written again, the fourth stopped
// until ejected. Before, every key the fourth took read its value from
// before it came (Redis: 50 of 50); now the first read at a stand-in
// removes its copy, and misses (see outage.fence). The second read
// misses too, and a key written meanwhile reads what was written.
func TestRehashAfterAChangeReadsNoOldCopy(t *testing.T) {
	t.Parallel()
	t.Run("memcached", func(t *testing.T) { checkNoOldCopy(t, fenceMemcached(t, "ring", true)) })
	t.Run("redis", func(t *testing.T) { checkNoOldCopy(t, fenceRedis(t, "ring")) })
}

// TestRehashReturnSettlesEveryKeyItMoves: under nutcracker's modula an
// ejection places every key afresh over the servers left, so keys of
// servers still up move too, and the server's return moves them back, to
// servers holding their values from before the ejection. Written while
// the server was out, they must be settled where the return sends them,
// as the server's own keys are (see outage). Before, a fault schedule
// (seed 113: memcached, modula, rehash, a file source) read 10 values
// older than writes acknowledged before; here every key is written
// before, during and after a server's ejection and read once it is back.
func TestRehashReturnSettlesEveryKeyItMoves(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		f    func(t *testing.T) fenceSetup
	}{
		{"memcached/modula", func(t *testing.T) fenceSetup { return fenceMemcached(t, "modula", false) }},
		{"redis/modula", func(t *testing.T) fenceSetup { return fenceRedis(t, "modula") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f(t)
			s := startProxy(t, strings.NewReplacer("server_retry_timeout: 600000", "server_retry_timeout: 200",
				"interval: 600000", "interval: 50").Replace(f.yaml(4)))
			c := f.client(s)
			const n = 200
			setAll := func(v string) {
				for i := range n {
					if got := c.set(fmt.Sprintf("k:%d", i), v); got != c.ok {
						t.Fatalf("set: %q", got)
					}
				}
			}
			setAll("before")
			onFourth := ""
			for i := range n {
				if k := fmt.Sprintf("k:%d", i); ownerOf(s.testPool("p"), k) == f.addr(3) {
					onFourth = k
				}
			}
			cont := f.stopUntil(3)
			eventually(t, "the fourth server ejected", func() bool {
				c.get(onFourth) // fails on it, which is then ejected
				return s.testPool("p").backends[3].health.isDown()
			})
			setAll("during")
			cont()
			eventually(t, "the fourth server back", func() bool { return !s.testPool("p").backends[3].health.isDown() })
			old := 0
			for i := range n {
				if got := c.get(fmt.Sprintf("k:%d", i)); strings.Contains(got, "before") {
					old++
				}
			}
			if old > 0 {
				t.Errorf("%d of %d keys read their value from before the ejection after the server's return", old, n)
			}
		})
	}
}

// fenceRehash returns the settings of TestRehashAfterAChangeReadsNoOldCopy's
// pools: one failure ejects, and the server stays out. The timeout, 300 ms
// on a quiet machine, is stretched by how busy it is: at load 15-40 on two
// cores a SET to a server that was not stopped timed out ("-ERR
// Connection timed out" in TestRehashReturnSettlesEveryKeyItMoves).
func fenceRehash() string {
	return fmt.Sprintf("  auto_eject_hosts: true\n  ejection: rehash\n  timeout: %d\n  server_failure_limit: 1\n", int(300*realprog.Busy())) +
		"  server_retry_timeout: 600000\n  health_check: {interval: 600000}\n"
}

// fenceKV is a client of one protocol through a proxy.
type fenceKV struct {
	set func(k, v string) string
	get func(k string) string
	ok  string
}

// fenceSetup is four servers of one protocol: the configuration of a pool
// over the first n, a client through a proxy, a server's address, and a
// stop (SIGSTOP) of one.
type fenceSetup struct {
	yaml   func(n int) string
	client func(s *Server) fenceKV
	addr   func(i int) string
	stop   func(i int)
	// stopUntil stops one until the function it returns is called.
	stopUntil func(i int) func()
}

func checkNoOldCopy(t *testing.T, f fenceSetup) {
	s := startProxy(t, f.yaml(3))
	c := f.client(s)
	const n = 200
	for i := range n {
		if got := c.set(fmt.Sprintf("k:%d", i), "old"); got != c.ok {
			t.Fatalf("set: %q", got)
		}
	}
	reload(t, s, f.yaml(4)) // the fourth joins: cold, the old copies stay
	var onNew []string
	for i := range n {
		k := fmt.Sprintf("k:%d", i)
		if got := c.set(k, "new"); got != c.ok {
			t.Fatalf("set: %q", got)
		}
		if ownerOf(s.testPool("p"), k) == f.addr(3) {
			onNew = append(onNew, k)
		}
	}
	if len(onNew) < 2 {
		t.Fatalf("%d keys on the fourth server", len(onNew))
	}
	f.stop(3)
	eventually(t, "the fourth server ejected", func() bool {
		c.get(onNew[0]) // fails on it, which is then ejected
		return ownerOf(s.testPool("p"), onNew[0]) != f.addr(3)
	})
	if got := c.set(onNew[1], "again"); got != c.ok {
		t.Fatalf("set %s with its server out: %q", onNew[1], got)
	}
	old := 0
	for round := range 2 {
		for _, k := range onNew {
			got := c.get(k)
			if strings.Contains(got, "old") {
				old++
			}
			if k == onNew[1] && !strings.Contains(got, "again") {
				t.Errorf("read %d of %s, written with its server out: %q", round, k, got)
			}
		}
	}
	if old > 0 {
		t.Errorf("%d reads of the %d keys the fourth server took read their value from before it came, with it ejected", old, len(onNew))
	}
}

func fenceMemcached(t *testing.T, dist string, cold bool) fenceSetup {
	ms := make([]*memcached, 4)
	for i := range ms {
		ms[i] = startMemcached(t, 0)
	}
	rehash := fenceRehash() // once, so that a reload changes the servers only
	return fenceSetup{
		yaml: func(k int) string {
			warm := ""
			if cold {
				warm = "  warm: {enabled: false}\n"
			}
			return poolYAML("  distribution: "+dist+"\n"+warm+rehash, ms[:k]...)
		},
		client: func(s *Server) fenceKV {
			c := dial(t, s.Addr("p").String())
			return fenceKV{set: func(k, v string) string { return c.do(fmt.Sprintf("set %s 0 0 %d\r\n%s\r\n", k, len(v), v)) },
				get: func(k string) string { return c.do("get " + k + "\r\n") }, ok: "STORED\r\n"}
		},
		addr:      func(i int) string { return ms[i].addr },
		stop:      func(i int) { sigstop(t, ms[i].cmd.Process) },
		stopUntil: func(i int) func() { return sigstopUntil(t, ms[i].cmd.Process) },
	}
}

func fenceRedis(t *testing.T, dist string) fenceSetup {
	rs := make([]*redisServer, 4)
	for i := range rs {
		rs[i] = startRedis(t, 0)
	}
	rehash := fenceRehash() // once, so that a reload changes the servers only
	return fenceSetup{
		yaml: func(k int) string { return redisPoolYAML("  distribution: "+dist+"\n"+rehash, rs[:k]...) },
		client: func(s *Server) fenceKV {
			c := dialRedis(t, s.Addr("p").String())
			return fenceKV{set: func(k, v string) string { return c.do("SET", k, v) },
				get: func(k string) string { return c.do("GET", k) }, ok: "+OK\r\n"}
		},
		addr:      func(i int) string { return rs[i].addr },
		stop:      func(i int) { sigstop(t, rs[i].cmd.Process) },
		stopUntil: func(i int) func() { return sigstopUntil(t, rs[i].cmd.Process) },
	}
}

// sigstop stops p until the test ends.
func sigstop(t *testing.T, p *os.Process) {
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Signal(syscall.SIGCONT) })
}

// sigstopUntil stops p until the function it returns is called, or the
// test ends.
func sigstopUntil(t *testing.T, p *os.Process) func() {
	sigstop(t, p)
	return func() {
		if err := p.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRefusedReplyWords: the replies by which a server says it did not
// apply a write - each counts the write as lost for the outages' journal,
// so that a stand-in's copy of before is not vouched for - against those
// of a write applied or a reply merely starting with the same letters.
func TestRefusedReplyWords(t *testing.T) {
	for reply, want := range map[string]bool{
		"-NOREPLICAS Not enough good replicas to write.\r\n": true,
		"-OOM command not allowed\r\n":                       true,
		"-READONLY You can't write against a replica.\r\n":   true,
		"NOT_STORED\r\n":                    true,
		"EXISTS\r\n":                        true,
		"SERVER_ERROR out of memory\r\n":    true,
		"CLIENT_ERROR bad data chunk\r\n":   true,
		"ERROR\r\n":                         true,
		"NS\r\n":                            true,
		"EX c123\r\n":                       true,
		"+OK\r\n":                           false,
		":1\r\n":                            false,
		"$5\r\nvalue\r\n":                   false,
		"*1\r\n-WRONGTYPE in a transaction": false, // EXEC's own reply: applied as a whole
		"STORED\r\n":                        false,
		"DELETED\r\n":                       false,
		"NOT_FOUND\r\n":                     false,
		"HD\r\n":                            false,
		"ERRORS\r\n":                        false,
		"NSX\r\n":                           false,
		"EXTRA\r\n":                         false,
		"":                                  false,
	} {
		if got := refusedReply([]byte(reply)); got != want {
			t.Errorf("refusedReply(%q) = %v, want %v", reply, got, want)
		}
	}
}
