package proxy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/membership/sentinel/sentineltest"
)

// sentinelPoolYAML is a Redis pool whose servers are the cluster's
// shards, named by their master names, on its Sentinels.
func sentinelPoolYAML(c *sentineltest.Cluster, listen string, extra ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "p:\n  listen: %s\n  redis: true\n  distribution: ring\n  timeout: 1000\n%s", listen, strings.Join(extra, ""))
	fmt.Fprintf(&b, "  membership: {sentinel: {sentinels: [%s], interval: 500, timeout: 300}}\n  servers:\n", strings.Join(c.SentinelAddrs(), ", "))
	for _, s := range c.Shards {
		fmt.Fprintf(&b, "   - %s:1 %s\n", s.Primary.Addr, s.Name)
	}
	return b.String()
}

// writeLoad is clients writing distinct keys through a proxy, one request
// at a time and writePace apart, recording what was acknowledged, when,
// and what failed.
type writeLoad struct {
	prefix   string
	mu       sync.Mutex
	acked    map[string]ackedWrite
	failed   atomic.Int64
	lastFail atomic.Int64 // unix nanoseconds
	lastErr  atomic.Value
	stop     atomic.Bool
	wg       sync.WaitGroup
}

// writePace is how long a writeLoad client waits after an acknowledged
// write. Eight clients so still write a key every millisecond or less,
// finer than anything the tests bound (a replica's lag of a second, a
// recovery of seconds); unpaced, the three loads of the failover test took
// every core they could (15.7 s of CPU in a 20 s test, alone on two
// cores), starving the Sentinels and the other tests they wait beside.
const writePace = 5 * time.Millisecond

func startWriteLoad(t *testing.T, addr, prefix string, clients int) *writeLoad {
	l := &writeLoad{prefix: prefix, acked: map[string]ackedWrite{}}
	for c := range clients {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			conn := dialRedis(t, addr)
			for i := 0; !l.stop.Load() && i < 1_000_000; i++ {
				k, v := fmt.Sprintf("%s:%d:%d", prefix, c, i), fmt.Sprint(i)
				conn.send("SET", k, v)
				reply, err := conn.read()
				if err != nil {
					conn = dialRedis(t, addr)
				}
				if reply == "+OK\r\n" {
					l.mu.Lock()
					l.acked[k] = ackedWrite{v, time.Now()}
					l.mu.Unlock()
					time.Sleep(writePace) // pacing the load, not waiting for a condition
					continue
				}
				l.failed.Add(1)
				l.lastFail.Store(time.Now().UnixNano())
				l.lastErr.Store(strings.TrimSpace(reply))
				time.Sleep(time.Millisecond)
			}
		}()
	}
	return l
}

// attempts returns how many writes the load has sent and had answered.
func (l *writeLoad) attempts() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int64(len(l.acked)) + l.failed.Load()
}

func (l *writeLoad) end() {
	l.stop.Store(true)
	l.wg.Wait()
}

// ackedWrite is a value a write set and when its acknowledgement came.
type ackedWrite struct {
	value string
	at    time.Time
}

// lostWrite is an acknowledged write not read back: its key, the server
// the pool places the key on now, and when it was acknowledged.
type lostWrite struct {
	key, server string
	at          time.Time
}

// lost reads every acknowledged key through addr and returns those not
// read back with their value.
func (l *writeLoad) lost(t *testing.T, addr string, p *pool) []lostWrite {
	c := dialRedis(t, addr)
	var lost []lostWrite
	for k, w := range l.acked {
		if got := c.do("GET", k); got != fmt.Sprintf("$%d\r\n%s\r\n", len(w.value), w.value) {
			lost = append(lost, lostWrite{k, ownerOf(p, k), w.at})
		}
	}
	return lost
}

// checkFailoverLosses holds a failover's lost writes to what asynchronous
// replication can lose: writes the killed primary acknowledged shortly
// before it was killed and had not yet sent its replica - which after
// the failover serves the shard at replica. A write acknowledged after
// the primary was gone (dead), one placed on another shard, or one acknowledged longer
// before the kill than a replica lags (a second, stretched by the
// machine's load) is a write the proxy lost. It returns the losses by
// server, for the log.
func checkFailoverLosses(t *testing.T, what string, lost []lostWrite, killed, dead time.Time, replica string) map[string]int {
	t.Helper()
	lag := time.Duration(float64(time.Second) * realprog.Busy())
	by := map[string]int{}
	for _, w := range lost {
		by[w.server]++
		switch {
		case w.at.After(dead):
			t.Errorf("%s: %s acknowledged %v after the primary was gone, not read back", what, w.key, w.at.Sub(dead).Round(time.Millisecond))
		case w.server != replica:
			t.Errorf("%s: %s on %s, not the failed shard (now at %s), not read back", what, w.key, w.server, replica)
		case killed.Sub(w.at) > lag:
			t.Errorf("%s: %s acknowledged %v before the kill, longer than a replica lags (%v), not read back", what, w.key, killed.Sub(w.at).Round(time.Millisecond), lag)
		}
	}
	return by
}

// waitRecovered waits until the load's writes have failed and then gone
// 2 s without a failure (a minute at most from killed), and returns when
// the replica at replica was first seen promoted, or the zero time. The
// bound on kolco's recovery counts from the promotion: how long the
// Sentinels take to agree on it depends on the machine, how long kolco
// takes to follow on kolco. (Counted from the kill, a 10 s bound failed at
// load 37: the last failed write came 15 s after.)
func (l *writeLoad) waitRecovered(replica string, killed time.Time) (promoted time.Time) {
	deadline := killed.Add(time.Minute) // a bound, as eventually's
	for time.Now().Before(deadline) {
		if promoted.IsZero() && sentineltest.Role(replica) == "master" {
			promoted = time.Now()
		}
		last := time.Unix(0, l.lastFail.Load())
		if l.failed.Load() > 0 && time.Since(last) > 2*time.Second {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return promoted
}

// TestSentinelFailoverUnderLoad: three shards of a primary and a replica
// behind Sentinel; eight clients write through kolco and eight through
// nutcracker (the same shards by address) while shard-b's primary is
// killed. kolco follows the failover: its writes to every shard succeed
// again within a bound, and the failed requests and acknowledged writes
// lost are reported; nutcracker's shard stays down.
//
// Eight more clients write through a second kolco pool on the same
// Sentinels with twemproxy's ejection (auto_eject_hosts, as a migrated
// nutcracker.yml carries it): while the primary is down its keys are
// written to the other shards, and once the replica is promoted those
// writes are moved onto it before it serves, so that it loses no more
// than the pool without ejection.
func TestSentinelFailoverUnderLoad(t *testing.T) {
	t.Parallel()
	c := sentineltest.Start(t, 1000*time.Millisecond, "shard-a", "shard-b", "shard-c")
	s := startProxy(t, sentinelPoolYAML(c, "127.0.0.1:0"))
	addr := s.Addr("p").String()
	rs := startProxy(t, sentinelPoolYAML(c, "127.0.0.1:0", "  auto_eject_hosts: true\n  server_failure_limit: 1\n"))
	rehashAddr := rs.Addr("p").String()
	rehash := startWriteLoad(t, rehashAddr, "r", 8)
	ncListen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	ncYAML := fmt.Sprintf("p:\n  listen: %s\n  redis: true\n  hash: fnv1a_64\n  distribution: ketama\n  timeout: 1000\n  servers:\n", ncListen)
	for _, sh := range c.Shards {
		ncYAML += fmt.Sprintf("   - %s:1 %s\n", sh.Primary.Addr, sh.Name)
	}
	startNutcracker(t, ncYAML, ncListen)

	kolco, nc := startWriteLoad(t, addr, "k", 8), startWriteLoad(t, ncListen, "n", 8)
	time.Sleep(time.Second)
	if kolco.failed.Load() != 0 {
		t.Fatalf("%d writes failed before the kill: %v", kolco.failed.Load(), kolco.lastErr.Load())
	}
	killed := time.Now()
	c.Shards[1].Primary.Kill()
	dead := time.Now() // Kill returns once the process is gone
	promoted := kolco.waitRecovered(c.Shards[1].Replica.Addr, killed)
	ncFailedBefore, ncSent := nc.failed.Load(), nc.attempts()
	// Nutcracker's shard must still fail in the half second after, and
	// over 60 writes at least: a third of them go to that shard, and at
	// load 53 on two cores the paced clients sent too few in 500 ms for
	// one to fail.
	time.Sleep(500 * time.Millisecond)
	eventually(t, "nutcracker's clients to send 60 more writes", func() bool { return nc.attempts()-ncSent >= 60 })
	kolco.end()
	nc.end()
	rehash.end()
	recovered := time.Unix(0, kolco.lastFail.Load()).Sub(killed)
	if time.Since(time.Unix(0, kolco.lastFail.Load())) < 2*time.Second {
		t.Fatalf("kolco's writes still fail %v after the kill: %v", time.Since(killed).Round(time.Millisecond), kolco.lastErr.Load())
	}
	// Replication is asynchronous: what the killed primary acknowledged
	// and had not sent its replica is lost, and nothing else.
	lost := kolco.lost(t, addr, s.testPool("p"))
	by := checkFailoverLosses(t, "kolco", lost, killed, dead, c.Shards[1].Replica.Addr)
	t.Logf("kolco: %d of %d writes failed, the last %v after the kill (down-after %v, the replica promoted after %v), e.g. %v; %d acknowledged writes lost %v",
		kolco.failed.Load(), int(kolco.failed.Load())+len(kolco.acked), recovered.Round(time.Millisecond), c.DownAfter,
		promoted.Sub(killed).Round(time.Millisecond), kolco.lastErr.Load(), len(lost), by)
	t.Logf("nutcracker: %d writes failed, %d of them in the last 500 ms of the test or more: its shard stays down, e.g. %v",
		nc.failed.Load(), nc.failed.Load()-ncFailedBefore, nc.lastErr.Load())
	eventually(t, "the ejecting pool's promoted replica serving", func() bool {
		b := rs.testPool("p").backendNamed(c.Shards[1].Name)
		return b.addr == c.Shards[1].Replica.Addr && !b.health.isDown()
	})
	rehashLost := rehash.lost(t, rehashAddr, rs.testPool("p"))
	rehashBy := checkFailoverLosses(t, "with auto_eject_hosts", rehashLost, killed, dead, c.Shards[1].Replica.Addr)
	t.Logf("kolco with auto_eject_hosts: %d of %d writes failed; %d acknowledged writes lost %v",
		rehash.failed.Load(), int(rehash.failed.Load())+len(rehash.acked), len(rehashLost), rehashBy)
	if nc.failed.Load() == ncFailedBefore {
		t.Errorf("nutcracker's writes succeed again: the comparison does not hold")
	}
	if promoted.IsZero() {
		t.Errorf("the replica was never seen promoted")
	} else if followed := time.Unix(0, kolco.lastFail.Load()).Sub(promoted); followed > 10*time.Second {
		t.Errorf("kolco took %v after the replica's promotion to write to every shard again", followed)
	}
	latest, counts := s.testPool("p").stats.failovers.snapshot()
	b := c.Shards[1]
	if len(latest) != 1 || latest[0].Server != b.Name || latest[0].From != b.Primary.Addr || latest[0].To != b.Replica.Addr ||
		counts[b.Name] != 1 || latest[0].Unavailable <= 0 || latest[0].Unavailable > recovered.Seconds()+0.5 {
		t.Errorf("failovers %+v %v; want one of %s from %s to %s, unavailable for up to %v", latest, counts, b.Name, b.Primary.Addr, b.Replica.Addr, recovered)
	} else {
		t.Logf("the failover as the admin endpoint reports it: %+v", latest[0])
	}
}

// TestSentinelsDownAndReload: with every Sentinel down the proxy keeps
// serving each shard at the primary it knows, not one write failing; a
// reload of the configuration while a primary is being failed over, and
// the Sentinels' return, end with every shard written at its primary.
func TestSentinelsDownAndReload(t *testing.T) {
	t.Parallel()
	c := sentineltest.Start(t, 1000*time.Millisecond, "shard-a", "shard-b")
	yaml := sentinelPoolYAML(c, "127.0.0.1:0")
	s := startProxy(t, yaml)
	addr := s.Addr("p").String()
	load := startWriteLoad(t, addr, "k", 8)
	defer load.end()
	time.Sleep(300 * time.Millisecond)
	for _, sp := range c.Sentinels {
		sp.Kill()
	}
	time.Sleep(1500 * time.Millisecond)
	if n := load.failed.Load(); n != 0 {
		t.Fatalf("%d writes failed with the Sentinels down: %v", n, load.lastErr.Load())
	}
	for _, sp := range c.Sentinels {
		sp.Start(t)
	}
	c.WaitReady(t)
	// A failover, and a reload in its midst: the reload keeps the
	// running source, which follows the failover.
	killed := time.Now()
	c.Shards[0].Primary.Kill()
	if err := s.ReloadData(context.Background(), "test", []byte(yaml)); err != nil {
		t.Fatal(err)
	}
	// At the promoted replica, and a second with no write failing: on a
	// busy machine a second may pass with no write at all.
	eventually(t, "writes to every shard to succeed again", func() bool {
		return load.failed.Load() > 0 && s.testPool("p").backendNamed("shard-a").addr == c.Shards[0].Replica.Addr &&
			time.Since(time.Unix(0, load.lastFail.Load())) > time.Second
	})
	t.Logf("Sentinels down 1.5 s: 0 writes failed; a failover with a reload in its midst: %d writes failed, the last %v after the kill",
		load.failed.Load(), time.Unix(0, load.lastFail.Load()).Sub(killed).Round(time.Millisecond))
	if got := s.testPool("p").backendNamed("shard-a").addr; got != c.Shards[0].Replica.Addr {
		t.Errorf("shard-a at %s after the failover, want its replica %s", got, c.Shards[0].Replica.Addr)
	}
}

// TestStoreFollowsFailover: a store on Sentinel. A failover puts a
// shard's name at its replica's address, which holds the shard's keys:
// that is no move. The keys written before it (replicated first) read
// back after it, the pool has no move going on, and writes to every shard
// succeed again as in a pool that is no store.
func TestStoreFollowsFailover(t *testing.T) {
	t.Parallel()
	c := sentineltest.Start(t, 1000*time.Millisecond, "shard-a", "shard-b")
	s := startProxy(t, sentinelPoolYAML(c, "127.0.0.1:0")+"  store: {enabled: true}\n")
	addr := s.Addr("p").String()
	keys := fillStore(t, addr, 1000)
	for _, sh := range c.Shards {
		if v, err := sentineltest.Do(sh.Primary.Addr, "WAIT", "1", "5000"); err != nil || v.Int != 1 {
			t.Fatalf("%s: WAIT for its replica: %+v %v", sh.Name, v, err)
		}
	}
	load := startWriteLoad(t, addr, "k", 4)
	defer load.end()
	time.Sleep(300 * time.Millisecond)
	killed := time.Now()
	c.Shards[0].Primary.Kill()
	eventually(t, "shard-a at its replica", func() bool {
		return s.testPool("p").backendNamed("shard-a").addr == c.Shards[0].Replica.Addr
	})
	// At the promoted replica, and a second with no write failing: on a
	// busy machine a second may pass with no write at all.
	eventually(t, "writes to every shard to succeed again", func() bool {
		return load.failed.Load() > 0 && s.testPool("p").backendNamed("shard-a").addr == c.Shards[0].Replica.Addr &&
			time.Since(time.Unix(0, load.lastFail.Load())) > time.Second
	})
	t.Logf("a store's failover: %d writes failed, the last %v after the kill (%v)", load.failed.Load(),
		time.Unix(0, load.lastFail.Load()).Sub(killed).Round(time.Millisecond), load.lastErr.Load())
	if m := moveOf(s.testPool("p").place.Load()); m != nil {
		t.Errorf("a move after a failover, over %d placements", len(m.priors))
	}
	cl := dialRedis(t, addr)
	lost := 0
	for _, k := range keys {
		if cl.do("GET", k) != "$1\r\nv\r\n" {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d keys written before the failover not read after it", lost, len(keys))
	}
}

// TestStoreFailoverMidMove: a store on Sentinel gets a third shard, and
// while its keys move there the primary of a shard they move from is
// killed. The move goes on from the promoted replica: it ends, every key
// written before (replicated first) reads back, and each is on its
// shard's primary alone, checked on the servers.
func TestStoreFailoverMidMove(t *testing.T) {
	t.Parallel()
	c := sentineltest.Start(t, 1000*time.Millisecond, "shard-a", "shard-b", "shard-c")
	all := sentinelPoolYAML(c, "127.0.0.1:0") + "  store: {enabled: true, rate: 300}\n"
	two := strings.Replace(all, fmt.Sprintf("   - %s:1 shard-c\n", c.Shards[2].Primary.Addr), "", 1)
	s := startProxy(t, two)
	addr := s.Addr("p").String()
	keys := fillStore(t, addr, 3000)
	for _, sh := range c.Shards[:2] {
		if v, err := sentineltest.Do(sh.Primary.Addr, "WAIT", "1", "5000"); err != nil || v.Int != 1 {
			t.Fatalf("%s: WAIT for its replica: %+v %v", sh.Name, v, err)
		}
	}
	if err := s.ReloadData(context.Background(), "test", []byte(all)); err != nil {
		t.Fatal(err)
	}
	// The Sentinels are asked for the third master's primary first.
	eventually(t, "keys moving to shard-c", func() bool {
		p := s.testPool("p")
		m := moveOf(p.place.Load())
		return len(p.backends) == 3 && m != nil && m.stats.moved.Load() > 100
	})
	c.Shards[0].Primary.Kill()
	eventually(t, "shard-a at its replica", func() bool { return s.testPool("p").backendNamed("shard-a").addr == c.Shards[0].Replica.Addr })
	p := s.testPool("p")
	waitMoved(t, p)
	cl := dialRedis(t, addr)
	lost := 0
	for _, k := range keys {
		if cl.do("GET", k) != "$1\r\nv\r\n" {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d keys written before the change not read after it", lost, len(keys))
	}
	var primaries []*redisServer
	for _, b := range p.backends {
		primaries = append(primaries, &redisServer{addr: b.addr})
	}
	checkPlaced(t, p, primaries, keys, true)
}

// TestSentinelReloadChangesMasters: the servers of a pool on Sentinel
// name the masters its source asks for; a reload that adds or removes one
// starts the source again over the new masters.
func TestSentinelReloadChangesMasters(t *testing.T) {
	t.Parallel()
	c := sentineltest.Start(t, 1000*time.Millisecond, "shard-a", "shard-b")
	all := sentinelPoolYAML(c, "127.0.0.1:0")
	one := strings.Replace(all, fmt.Sprintf("   - %s:1 shard-b\n", c.Shards[1].Primary.Addr), "", 1)
	s := startProxy(t, one)
	for _, yaml := range []string{all, one} {
		if err := s.ReloadData(context.Background(), "test", []byte(yaml)); err != nil {
			t.Fatal(err)
		}
		want := strings.Count(yaml, " shard-")
		eventually(t, fmt.Sprintf("the pool on %d masters", want), func() bool {
			p := s.testPool("p")
			return len(p.backends) == want && p.members.revision > 0
		})
	}
}
