package proxy

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/algo"
)

// stallRun is what a stall test saw: reads that gave a value older than
// the last write acknowledged before they began (stale), or a value only
// a failed write wrote (inDoubt: a write that timed out may take effect
// later, as a linearizable store allows); and the victim's keys nobody
// rewrote that it no longer holds afterwards (lost).
type stallRun struct {
	reads, writes, failedWrites, stale, inDoubt int64
	victimKeys, rewritten, lost                 int
}

// stallTarget is what a stall test runs against: the address clients use,
// the servers behind it, the one it stalls, and whether that one is
// marked down (nil: the test waits stall/2 after the stall instead).
type stallTarget struct {
	proto   string
	addr    string
	servers []string
	victim  string
	stop    func(sig syscall.Signal)
	isDown  func() bool
	owner   func(key string) string // where a key lives with every server up
	// victimAt returns stop and isDown of servers[i].
	victimAt func(i int) (stop func(syscall.Signal), isDown func() bool)
	// troubles counts the requests the pool's servers failed and their
	// ejections so far (nil for nutcracker, whose are not seen).
	troubles func() uint64
}

// stallLoad is the load of a stall test: keys written with rising
// versions by writers that each own their keys, and read by readers that
// check every value against the versions acknowledged before the read
// began. The second half of the keys is never rewritten.
type stallLoad struct {
	t         *testing.T
	tg        stallTarget
	keys      []string
	acked     []atomic.Int64 // the highest version acknowledged
	attempted []atomic.Int64 // the highest version sent
	// failed are the versions whose write failed, by key: each may take
	// effect at any time after it was sent (a timed-out write is in
	// doubt), so a read of one is no stale read.
	failed   []map[int64]bool
	failedMu sync.Mutex
	run      stallRun
	deadline time.Time // a bound on the load, whatever happens
	stop     chan struct{}
	wg       sync.WaitGroup
}

const stallWriters, stallReaders = 4, 4

// runStall writes every key once, then stalls the victim twice for stall
// while the load runs; then checks the victim directly.
func runStall(t *testing.T, tg stallTarget, stall time.Duration) stallRun {
	l := &stallLoad{t: t, tg: tg, keys: make([]string, 1200), deadline: time.Now().Add(4*stall + 20*time.Second),
		stop: make(chan struct{})}
	l.acked, l.attempted = make([]atomic.Int64, len(l.keys)), make([]atomic.Int64, len(l.keys))
	l.failed = make([]map[int64]bool, len(l.keys))
	names := rand.New(rand.NewPCG(5, 6))
	for i := range l.keys {
		l.keys[i] = fmt.Sprintf("stall:%d:%x", i, names.Uint64())
	}
	fillKV(t, tg.proto, tg.addr, l.keys, func(int) string { return "0" })
	l.holdFill()
	// The victim is the server that owns the most keys, so that the keys
	// it holds and nobody rewrites are many whatever the distribution
	// makes of this run's server addresses.
	owned := make([]int, len(tg.servers))
	for _, k := range l.keys {
		owned[slices.Index(tg.servers, tg.owner(k))]++
	}
	v := slices.Index(owned, slices.Max(owned))
	tg.victim = tg.servers[v]
	tg.stop, tg.isDown = tg.victimAt(v)
	l.tg = tg
	for w := range stallWriters {
		l.start(func(c kvConn, rng *rand.Rand) (kvConn, bool) { return l.write(c, rng, w) }, uint64(w))
	}
	for r := range stallReaders {
		l.start(l.read, 100+uint64(r))
	}
	for range 2 {
		time.Sleep(stall / 2)
		tg.stop(syscall.SIGSTOP)
		time.Sleep(stall)
		tg.stop(syscall.SIGCONT)
		if tg.isDown != nil {
			eventually(t, "the stalled server back", func() bool { return !tg.isDown() })
		} else {
			time.Sleep(stall / 2)
		}
		time.Sleep(stall / 4)
	}
	close(l.stop)
	l.wg.Wait()
	l.checkVictim()
	return l.run
}

// holdFill makes sure every server holds each key it owns as the fill
// wrote it before the stalls begin: what the test then counts as lost is
// lost to a stall. A busy machine can miss the pool's timeouts during the
// fill, marking a server down while a write of its is in flight; that
// key's return removes it from the server and its stand-in (a write in
// doubt: a miss, never an older value; see unsureStandIn), which is a
// miss the fill caused, not a key a stall lost (a run at load 14-28 on 2
// cores counted one so). Such keys are written again once every server
// is up.
func (l *stallLoad) holdFill() {
	if _, isDown := l.tg.victimAt(0); isDown == nil {
		return // nutcracker's: no way to tell its servers are all up
	}
	conns := map[string]kvConn{}
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	for round := 1; ; round++ {
		for i := range l.tg.servers {
			if _, isDown := l.tg.victimAt(i); isDown != nil {
				eventually(l.t, "every server up after the fill", func() bool { return !isDown() })
			}
		}
		var missing []string
		for _, k := range l.keys {
			owner := l.tg.owner(k)
			c, ok := conns[owner]
			if !ok {
				var err error
				if c, err = dialKV(l.tg.proto, owner); err != nil {
					l.t.Fatal(err)
				}
				conns[owner] = c
			}
			if val, found, err := c.get(k); err != nil {
				l.t.Fatalf("reading %s at %s: %v", k, owner, err)
			} else if !found || val != "0" {
				missing = append(missing, k)
			}
		}
		if len(missing) == 0 {
			return
		}
		l.t.Logf("%d keys the fill wrote are not on their server (a server was marked down during the fill): written again", len(missing))
		if round == 5 {
			l.t.Fatalf("%d keys still not on their server after %d fills", len(missing), round)
		}
		fillKV(l.t, l.tg.proto, l.tg.addr, missing, func(int) string { return "0" })
	}
}

// start runs step on a connection of its own until the load stops; step
// returns the connection to go on with, and false to end.
func (l *stallLoad) start(step func(kvConn, *rand.Rand) (kvConn, bool), seed uint64) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		rng := rand.New(rand.NewPCG(seed, 1))
		c, err := dialKV(l.tg.proto, l.tg.addr)
		if err != nil {
			l.t.Error(err)
			return
		}
		for ok := true; ok && time.Now().Before(l.deadline); {
			select {
			case <-l.stop:
				c.close()
				return
			default:
			}
			c, ok = step(c, rng)
		}
		if c != nil {
			c.close()
		}
	}()
}

// redial replaces a connection that failed.
func (l *stallLoad) redial(c kvConn) (kvConn, bool) {
	c.close()
	c, err := dialKV(l.tg.proto, l.tg.addr)
	if err != nil {
		l.t.Error(err)
		return nil, false
	}
	return c, true
}

// write writes one of writer w's keys, in the first half, with its next
// version.
func (l *stallLoad) write(c kvConn, rng *rand.Rand, w int) (kvConn, bool) {
	i := w + stallWriters*rng.IntN(len(l.keys)/2/stallWriters)
	v := l.attempted[i].Add(1)
	atomic.AddInt64(&l.run.writes, 1)
	if err := c.set(l.keys[i], strconv.FormatInt(v, 10)); err != nil {
		atomic.AddInt64(&l.run.failedWrites, 1)
		l.failedMu.Lock()
		if l.failed[i] == nil {
			l.failed[i] = map[int64]bool{}
		}
		l.failed[i][v] = true
		l.failedMu.Unlock()
		return l.redial(c)
	}
	for a := l.acked[i].Load(); a < v && !l.acked[i].CompareAndSwap(a, v); a = l.acked[i].Load() {
	}
	return c, true
}

// read reads a key and checks its version against those acknowledged
// before the read began.
func (l *stallLoad) read(c kvConn, rng *rand.Rand) (kvConn, bool) {
	i := rng.IntN(len(l.keys))
	floor := l.acked[i].Load()
	val, found, err := c.get(l.keys[i])
	atomic.AddInt64(&l.run.reads, 1)
	switch {
	case err != nil:
		return l.redial(c)
	case !found:
		return c, true // a miss is no value: a cache refills it
	}
	v, _ := strconv.ParseInt(val, 10, 64)
	switch {
	case l.failedWrite(i, v):
		atomic.AddInt64(&l.run.inDoubt, 1)
	case v < floor:
		if atomic.AddInt64(&l.run.stale, 1) <= 3 {
			l.t.Logf("%s read %d after %d was acknowledged; the servers hold %s", l.keys[i], v, floor, l.held(l.keys[i]))
		}
	case v > l.acked[i].Load() && v <= l.attempted[i].Load():
		atomic.AddInt64(&l.run.inDoubt, 1) // a write in flight as it was read
	}
	return c, true
}

// held says what each server holds of key now, for the log of a stale
// read.
func (l *stallLoad) held(key string) string {
	var b strings.Builder
	for _, addr := range l.tg.servers {
		c, err := dialKV(l.tg.proto, addr)
		if err != nil {
			fmt.Fprintf(&b, " %s: %v;", addr, err)
			continue
		}
		v, found, err := c.get(key)
		c.close()
		fmt.Fprintf(&b, " %s: %q %v %v;", addr, v, found, err)
	}
	return b.String()
}

// failedWrite reports whether version v of key i was written and the write
// failed.
func (l *stallLoad) failedWrite(i int, v int64) bool {
	l.failedMu.Lock()
	defer l.failedMu.Unlock()
	return l.failed[i][v]
}

// checkVictim counts the victim's keys, those rewritten, and those nobody
// rewrote that it no longer holds as they were.
func (l *stallLoad) checkVictim() {
	direct, err := dialKV(l.tg.proto, l.tg.victim)
	if err != nil {
		l.t.Fatal(err)
	}
	defer direct.close()
	for i, k := range l.keys {
		if l.tg.owner(k) != l.tg.victim {
			continue
		}
		l.run.victimKeys++
		if l.attempted[i].Load() > 0 {
			l.run.rewritten++
			continue
		}
		if val, found, err := direct.get(k); err != nil || !found || val != "0" {
			l.run.lost++
		}
	}
}

// stallDistributions are the distributions a stall test runs: ketama (a
// twemproxy pool run unchanged) and every kolco distribution.
func stallDistributions() []string { return append([]string{"ketama"}, algo.Names()...) }

// TestStallLosesNothing: a pool under rehash whose server stalls twice
// (SIGSTOP), its keys written meanwhile to the servers standing in for
// it, keeps every key of that server nobody rewrote (it is never
// emptied), and no read after either return gives a value older than the
// last write acknowledged before the read began: the keys written
// elsewhere are settled before the server serves again, and the stand-ins'
// copies removed, so the second stall finds none of the first's. A read
// of a value whose write failed is in doubt, not stale (a timed-out write
// may take effect at any time). For ketama and the ways a kolco placement
// finds a stand-in (ring, maglev, power, and jump, history-dependent),
// memcached and Redis; each stall is 1 s, over three times the pools'
// timeout (300 ms), so the stalled server is marked down while writes go
// on. KOLCO_FAILURE_LONG=1 runs every kolco distribution, with 2.5 s
// stalls. With KOLCO_NUTCRACKER=1 the same load through the real
// nutcracker (ketama, auto_eject_hosts) is run and logged beside, not held
// to this: it reads values older than an acknowledged write (194 and 215
// here with 1 s stalls, 264 and 265 with 2.5 s; 185 at load 30), where
// every kolco pool reads none. It asserts nothing and cost a sixth of the
// test's time, so it runs on request.
func TestStallLosesNothing(t *testing.T) {
	t.Parallel()
	long := os.Getenv("KOLCO_FAILURE_LONG") != ""
	dists := []string{"ketama", "ring", "maglev", "power", "jump"}
	if long {
		dists = stallDistributions()
	}
	dists = withNutcracker(dists)
	sem := make(chan struct{}, 3) // runs at once: each is mostly waiting
	for _, proto := range []string{"memcached", "redis"} {
		for _, dist := range dists {
			t.Run(proto+"/"+dist, func(t *testing.T) {
				t.Parallel()
				sem <- struct{}{}
				defer func() { <-sem }()
				stall := time.Second
				if long {
					stall = 2500 * time.Millisecond
				}
				run := runStall(t, stallTargetOf(t, proto, dist), stall)
				t.Logf("%s %s: %d reads, %d writes (%d failed), %d stale, %d in doubt; victim's keys %d, rewritten %d, lost %d",
					proto, dist, run.reads, run.writes, run.failedWrites, run.stale, run.inDoubt, run.victimKeys, run.rewritten, run.lost)
				if dist == "nutcracker" {
					return // reported beside, not held to kolco's promise
				}
				if run.stale > 0 || run.lost > 0 {
					t.Errorf("%d stale reads, %d of the victim's %d keys nobody rewrote lost", run.stale, run.lost, run.victimKeys-run.rewritten)
				}
				if run.victimKeys-run.rewritten < 50 {
					t.Errorf("only %d of the victim's keys were left alone: the test checks too little", run.victimKeys-run.rewritten)
				}
			})
		}
	}
}

// proxyStallTarget starts four servers and a proxy over them, a pool of
// dist under rehash that marks a server down at its first failure.
func proxyStallTarget(t *testing.T, proto, dist string) stallTarget {
	settings := "  distribution: " + dist + "\n  auto_eject_hosts: true\n  server_failure_limit: 1\n" +
		"  timeout: 300\n  server_retry_timeout: 400\n  health_check: {interval: 100, timeout: 200}\n"
	if dist == "ketama" {
		settings += "  hash: fnv1a_64\n"
	}
	tg := stallTarget{proto: proto}
	var y string
	var stop []func(syscall.Signal)
	if proto == "redis" {
		rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
		y = redisPoolYAML(settings, rs...)
		for _, r := range rs {
			tg.servers = append(tg.servers, r.addr)
			stop = append(stop, func(sig syscall.Signal) { _ = r.cmd.Process.Signal(sig) })
		}
	} else {
		ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
		y = poolYAML(settings, ms...)
		for _, m := range ms {
			tg.servers = append(tg.servers, m.addr)
			stop = append(stop, func(sig syscall.Signal) { _ = m.cmd.Process.Signal(sig) })
		}
	}
	s := startProxy(t, y)
	tg.addr = s.Addr("p").String()
	p := s.testPool("p")
	tg.owner = func(key string) string { return configuredOwnerOf(p, key) }
	tg.victimAt = func(i int) (func(syscall.Signal), func() bool) {
		return stop[i], func() bool { return s.testPool("p").backends[i].health.isDown() }
	}
	tg.troubles = func() uint64 {
		var n uint64
		for _, b := range s.testPool("p").backends {
			n += b.stats.errors.Load() + b.stats.ejections.Load()
		}
		return n
	}
	return tg
}

// TestOutageJournalOverflow: past outage_journal keys written elsewhere,
// what a down server missed is unknown. A server the pool does not own
// alone stays down, however many probes succeed, until an operator says
// it is empty (POST .../rejoin); one marked exclusive is emptied and
// rejoins. Either way it serves no value older than one written while it
// was out.
func TestOutageJournalOverflow(t *testing.T) {
	t.Parallel()
	for _, exclusive := range []bool{false, true} {
		t.Run(fmt.Sprint("exclusive=", exclusive), func(t *testing.T) {
			c := startCluster(t, 3)
			settings := "  distribution: ring\n  auto_eject_hosts: true\n  server_failure_limit: 1\n  outage_journal: 10\n"
			if exclusive {
				settings += "  sweep: {exclusive: [m1]}\n"
			}
			y := c.yaml(settings, 0, 1, 2) + "kolco:\n  admin_listen: 127.0.0.1:0\n"
			s := startProxy(t, y)
			cl := dial(t, s.Addr("p").String())
			keys := testKeys("overflow", 300)
			for _, k := range keys {
				setValue(cl, k, "before", 0, 0)
			}
			p := s.testPool("p")
			owners := routeNames(p, keys)
			down := p.backends[1]
			down.fail(ErrConnLost, 1)
			var theirs []string
			for i, k := range keys {
				if owners[i] == "m1" {
					theirs = append(theirs, k)
					setValue(cl, k, "while-down", 0, 0)
				}
			}
			if len(theirs) <= 10 {
				t.Fatalf("m1 owns %d keys: too few to overflow the journal", len(theirs))
			}
			p.checks.restore(down)
			if !exclusive {
				if !down.health.isDown() {
					t.Fatal("restored although its journal overflowed and it is not exclusive")
				}
				if code := adminPost(t, s, "/v1/pools/p/servers/m0/rejoin"); code != http.StatusConflict {
					t.Errorf("rejoin of a server that is up: %d, want 409", code)
				}
				dialDirect(t, c.ms[1]).flushAll() // the operator empties it
				if code := adminPost(t, s, "/v1/pools/p/servers/m1/rejoin"); code != http.StatusOK {
					t.Fatalf("rejoin: %d", code)
				}
				p.checks.restore(down)
			}
			if down.health.isDown() {
				t.Fatal("m1 not restored")
			}
			for _, k := range theirs {
				if got := getValue(cl, k); got == "before" {
					t.Fatalf("%s reads the value from before m1 was out", k)
				}
			}
		})
	}
}

// adminPost posts to the admin endpoint's path and returns the status.
func adminPost(t *testing.T, s *Server, path string) int {
	t.Helper()
	resp, err := http.Post("http://"+s.AdminAddr().String()+path, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
