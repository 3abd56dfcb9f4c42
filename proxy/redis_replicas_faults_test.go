package proxy

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/membership/sentinel/sentineltest"
)

// readLoad is clients reading one key through a proxy, one request at a
// time, counting the replies that are not its value, from a moment on.
type readLoad struct {
	counting atomic.Bool
	reads    atomic.Int64
	failed   atomic.Int64
	mu       sync.Mutex
	example  string
	stop     atomic.Bool
	wg       sync.WaitGroup
}

func startReadLoad(t *testing.T, addr, key, want string, clients int) *readLoad {
	l := &readLoad{}
	deadline := time.Now().Add(2 * time.Minute) // a bound, whatever happens
	for range clients {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			c := dialRedis(t, addr)
			for i := 0; !l.stop.Load() && i < 1_000_000 && time.Now().Before(deadline); i++ {
				counted := l.counting.Load() // sent after the moment
				c.send("GET", key)
				reply, err := c.read()
				if !counted {
					if err != nil {
						c = dialRedis(t, addr)
					}
					// Until the moment, a read only keeps the connection
					// in use: a slower pace leaves the machine to the
					// failover the test waits for.
					time.Sleep(time.Millisecond)
					continue
				}
				l.reads.Add(1)
				if reply == want && err == nil {
					// Thousands of reads a second still cover every
					// moment, and leave the Sentinels and the restarted
					// primary the CPU the test waits on.
					time.Sleep(200 * time.Microsecond)
					continue
				}
				if l.failed.Add(1) == 1 {
					l.mu.Lock()
					l.example = strings.TrimSpace(reply)
					if err != nil {
						l.example += " (" + err.Error() + ")"
					}
					l.mu.Unlock()
				}
				if err != nil {
					c = dialRedis(t, addr)
				}
			}
		}()
	}
	return l
}

func (l *readLoad) end() {
	l.stop.Store(true)
	l.wg.Wait()
}

// TestReplicaReadsFailNothingWhileThePrimaryServes: with replica reads on,
// a shard whose primary is killed, failed over, restarted (it resyncs as
// the new primary's replica and is read once its lag is known) and whose
// replica is then killed with reads on it: once the promoted primary
// serves, no read fails - a read a replica cannot answer, because it died
// or its connection was let go, goes to the primary.
func TestReplicaReadsFailNothingWhileThePrimaryServes(t *testing.T) {
	t.Parallel()
	c := sentineltest.Start(t, 1000*time.Millisecond, "shard-a")
	sh := c.Shards[0]
	// A generous timeout: a dead server or a closed connection fails a
	// read at once, and a busy machine must not make a slow reply a
	// failed one (at 1000 ms, 4 reads in 341,821 timed out at load 35).
	y := strings.Replace(sentinelPoolYAML(c, "127.0.0.1:0"), "  timeout: 1000\n", "  timeout: 10000\n", 1)
	s := startProxy(t, y+"  replica_reads: {enabled: true, max_lag: 300}\n")
	addr := s.Addr("p").String()
	if got := dialRedis(t, addr).do("SET", "k", "v"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	readable := func(replica string) bool {
		tr := trackerOf(s.testPool("p"))
		if tr == nil {
			return false
		}
		reps := tr.shards[sh.Name].replicas.Load()
		return reps != nil && len(*reps) == 1 && (*reps)[0].b.addr == replica && (*reps)[0].readable.Load()
	}
	eventually(t, "the replica readable", func() bool { return readable(sh.Replica.Addr) })
	l := startReadLoad(t, addr, "k", "$1\r\nv\r\n", 4)
	defer l.end()

	old := sh.Primary
	old.Kill()
	sh.WaitPromoted(t, 20*time.Second)
	eventually(t, "the pool on the promoted primary", func() bool {
		return s.testPool("p").backendNamed(sh.Name).addr == sh.Primary.Addr
	})
	l.counting.Store(true)
	old.Start(t)
	// The restarted primary is made the promoted one's replica here, as
	// its supervisor would: Sentinel converts it only once it has been up
	// and answering for 8 s in a row (SENTINEL_PUBLISH_PERIOD*4) and its
	// master looks sane, which a busy machine can put off past any bound
	// (it did past 60 s); what is tested is the proxy's reads around it.
	if v, err := sentineltest.Do(old.Addr, "REPLICAOF", "127.0.0.1", strconv.Itoa(sh.Primary.Port)); err != nil || v.Str != "OK" {
		t.Fatalf("REPLICAOF on the restarted primary: %v %v", v, err)
	}
	eventually(t, "the restarted primary read as a replica", func() bool { return readable(old.Addr) })
	time.Sleep(4 * time.Second) // reads go on while it settles in
	returned := l.reads.Load()
	old.Kill()
	time.Sleep(time.Second) // reads with the replica gone
	l.end()
	t.Logf("%d reads after the failover, %d of them after the restarted primary was readable; %d failed (%s)",
		l.reads.Load(), l.reads.Load()-returned, l.failed.Load(), l.example)
	if l.failed.Load() > 0 {
		t.Errorf("%d of %d reads failed while the primary served, e.g. %s", l.failed.Load(), l.reads.Load(), l.example)
	}
}
