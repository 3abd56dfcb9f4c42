package proxy

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/resp"
	"github.com/kolco-dev/kolco/internal/storecheck"
)

// bigKeySizes are the big keys of the store's big-key tests: a hash of
// fields of 1 KB, a sorted set, and a list. KOLCO_STORE_BIG=full makes
// them those of the acceptance - a 100 MB hash, a sorted set of a million
// members; by default a tenth of that, which shows the same with less of
// the CI's time.
func bigKeySizes() (hashFields, zsetMembers, listElems int) {
	if os.Getenv("KOLCO_STORE_BIG") == "full" {
		return 100_000, 1_000_000, 1_000_000
	}
	return 10_000, 100_000, 100_000
}

// bigKeysMoving names keys, one per prefix, that the pool from puts on
// one server and the pool to on the server at addr, and returns them and
// the server they are on.
func bigKeysMoving(t *testing.T, from, to *pool, addr string, prefixes ...string) (keys []string, on string) {
	t.Helper()
	for _, prefix := range prefixes {
		for i := 0; ; i++ {
			k := prefix + strconv.Itoa(i)
			if ownerOf(to, k) == addr && (on == "" || ownerOf(from, k) == on) {
				keys, on = append(keys, k), ownerOf(from, k)
				break
			}
		}
	}
	return keys, on
}

// fillBig writes the big keys on the server at addr, each with a time to
// live of an hour, and returns their digests.
func fillBig(t *testing.T, addr string, hash, zset, list string) map[string]string {
	t.Helper()
	hashFields, zsetMembers, listElems := bigKeySizes()
	c := dialLong(t, addr)
	field := strings.Repeat("f", 1000)
	pipeline(t, c, hashFields, func(i int) []string { return []string{"HSET", hash, strconv.Itoa(i), field} })
	pipeline(t, c, zsetMembers/100, func(i int) []string {
		args := []string{"ZADD", zset}
		for j := range 100 {
			args = append(args, strconv.Itoa(i*100+j), "member:"+strconv.Itoa(i*100+j))
		}
		return args
	})
	pipeline(t, c, listElems/100, func(i int) []string {
		args := []string{"RPUSH", list}
		for j := range 100 {
			args = append(args, strconv.Itoa(i*100+j))
		}
		return args
	})
	want := map[string]string{}
	for _, k := range []string{hash, zset, list} {
		if got := c.do("PEXPIRE", k, "3600000"); got != ":1\r\n" {
			t.Fatalf("PEXPIRE %s: %q", k, got)
		}
		want[k] = digestOf(t, addr, k)
	}
	t.Logf("%s: %s bytes, %s: %s bytes, %s: %s bytes (MEMORY USAGE)", hash, memoryUsage(c, hash), zset, memoryUsage(c, zset), list, memoryUsage(c, list))
	return want
}

// dialLong is dialRedis for a connection of the full-size run, which may
// take minutes on a busy machine.
func dialLong(t *testing.T, addr string) *rc {
	c := dialRedis(t, addr)
	c.setDeadline(time.Now().Add(20 * time.Minute))
	return c
}

func memoryUsage(c *rc, key string) string {
	return strings.TrimSpace(strings.TrimPrefix(c.do("MEMORY", "USAGE", key, "SAMPLES", "0"), ":"))
}

func digestOf(t *testing.T, addr, key string) string {
	t.Helper()
	d, err := storecheck.Digest(context.Background(), addr, key)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestStoreMovesBigKeysWithoutAStall: a store of 4 redis-servers holding
// a hash of 10,000 fields of 1 KB (10 MB), a sorted set of 100,000
// members and a list of 100,000 elements on keys whose owner changes
// when a fifth server joins (with KOLCO_STORE_BIG=full: 100 MB, a million
// members, a million elements), while eight other clients GET and SET
// small keys, each every 2 ms or so: the big keys move piece by piece, and read back whole on
// their new server - the same content and expiry - and on no other, with
// no copy's names left; and neither server they moved between held its
// clients more than 50 ms longer than the servers they did not move
// between held theirs (a request straight to each every 5 ms, until the
// server ran it: see pings). With one MIGRATE each, the sorted set's held
// its old server 118 ms, where the other servers' slowest PING took 6 ms.
// The clients' slowest requests are logged.
func TestStoreMovesBigKeysWithoutAStall(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	yaml := func(servers []*redisServer) string {
		return redisPoolYAML("  distribution: ring\n  timeout: 10000\n  store: {enabled: true}\n", servers...)
	}
	five := startProxy(t, yaml(rs)) // where the keys go: placed, never used
	s, logs := startProxyLogged(t, yaml(rs[:4]))
	keys, on := bigKeysMoving(t, s.testPool("p"), five.testPool("p"), rs[4].addr, "bighash:", "bigzset:", "biglist:")
	want := fillBig(t, on, keys[0], keys[1], keys[2])
	addr := s.Addr("p").String()
	const nkeys = 10_000
	value := strings.Repeat("v", 100)
	pipeline(t, dialLong(t, addr), nkeys, func(i int) []string { return []string{"SET", fmt.Sprintf("key:%d", i), value} })
	// Paced: what the test holds is the servers' stalls, which a big
	// key's copy makes whatever the clients send, and the clients'
	// latency, logged; closed-loop, the clients took the cores from the
	// move and from the tests beside (9.4 s of CPU alone on two cores).
	l := startLatencyLoad(t, addr, 8, nkeys, value, 2*time.Millisecond)
	defer l.stop()
	steady := l.phase("steady", func() { time.Sleep(2 * time.Second) })
	for _, r := range rs {
		dialRedis(t, r.addr).do("SLOWLOG", "RESET") // the fill's and the digests' commands
	}
	pings := startPings(t, rs)
	moving := l.phase("4 -> 5 servers, the big keys moving", func() {
		reload(t, s, yaml(rs))
		waitMovedLong(t, s)
	})
	l.stop()
	slowest, held := pings.stop(t)
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "big key") {
			t.Log(line)
		}
	}
	// The machine's own stalls - other programs, the scheduler - hold
	// every server alike: the servers the keys did not move between
	// show them.
	var theirs, others, theirTrips, otherTrips time.Duration
	for i, r := range rs {
		if r.addr == on || i == 4 {
			theirs, theirTrips = max(theirs, held[i]), max(theirTrips, slowest[i])
		} else {
			others, otherTrips = max(others, held[i]), max(otherTrips, slowest[i])
		}
	}
	t.Logf("the slowest request straight to a server meanwhile: %v on the big keys' two servers, %v on the other three", theirTrips, otherTrips)
	t.Logf("the longest a server held one (until it ran it, by its clock): %v on the big keys' two servers, %v on the other three", theirs, others)
	for i, r := range rs {
		if log := slowCommands(t, r.addr); log != "" {
			t.Logf("server %d's commands over 10 ms (SLOWLOG): %s", i, log)
		}
	}
	// A server that runs more commands is more often caught in one when
	// the machine takes its core away, so the bound doubles the others'.
	if bound := 2*others + 50*time.Millisecond; theirs > bound {
		t.Errorf("the big keys' servers held a request %v, the others %v at most: the move held them", theirs, others)
	}
	// What the clients saw, through the proxy that copies: on a machine
	// at load 30 its own turns on the cores vary by more than 50 ms (the
	// steady seconds' slowest request above), so it is reported, not
	// bounded; the servers' stalls above are the move's own.
	t.Logf("the clients' slowest request: %v steady, %v while the big keys moved", steady.max, moving.max)
	for _, k := range keys {
		if got := digestOf(t, rs[4].addr, k); got != want[k] {
			t.Errorf("%s on its new server: %s, want %s", k, got, want[k])
		}
		for _, r := range rs[:4] {
			if got := dialRedis(t, r.addr).do("EXISTS", k); got != ":0\r\n" {
				t.Errorf("%s is still on %s too", k, r.addr)
			}
		}
	}
	for _, r := range rs {
		if got := dialRedis(t, r.addr).do("KEYS", "kolco:bigkey:*"); got != "*0\r\n" {
			t.Errorf("a copy's names are left on %s: %q", r.addr, got)
		}
	}
}

// pings asks each of a few servers its clock (TIME) every few
// milliseconds, straight, and keeps the longest each held a request: from
// the request sent to the moment the server ran it, by its own clock.
// That is how long the server held its clients, which is what a move may
// not stretch. A reply's way back is not counted, for it is this
// process's: a stall of it - the proxy in it copying the keys, the
// clients, the machine's other load - fell on whichever servers' replies
// were due when it came (949 ms on the others at load 40, the clients'
// slowest request to the millisecond, where the big keys' servers' was
// 620 ms), and a server that answers slower, running the move's pieces,
// has its reply due more often. The way there is alike for every server.
//
// Each server has a goroutine of its own, so that a stall of this process
// delays every server's request alike: asked one after another, the
// server whose request was out when it came took all of it (867 ms on a
// big key's server, where no command of its took over 32 ms, against 352
// ms on the others).
type pings struct {
	done      chan struct{}
	wg        sync.WaitGroup
	slowest   []time.Duration // the longest round trip of each server
	held      []time.Duration // the longest hold of each server, as above
	unmatched bool            // a reply that was no TIME
}

func startPings(t *testing.T, rs []*redisServer) *pings {
	p := &pings{done: make(chan struct{}), slowest: make([]time.Duration, len(rs)), held: make([]time.Duration, len(rs))}
	for i, r := range rs {
		c := dialLong(t, r.addr)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for {
				select {
				case <-p.done:
					return
				case <-time.After(5 * time.Millisecond):
				}
				start := time.Now()
				c.send("TIME")
				reply, err := c.read()
				if err != nil {
					return
				}
				trip := time.Since(start)
				ran, ok := parseTime(reply)
				if !ok {
					p.unmatched = true
					return
				}
				p.slowest[i] = max(p.slowest[i], trip)
				p.held[i] = max(p.held[i], ran.Sub(start))
			}
		}()
	}
	return p
}

// stop ends the requests and returns each server's longest round trip and
// longest hold.
func (p *pings) stop(t *testing.T) (slowest, held []time.Duration) {
	close(p.done)
	p.wg.Wait()
	if p.unmatched {
		t.Fatal("a server answered TIME with no time")
	}
	for i := range p.slowest {
		p.slowest[i] = p.slowest[i].Round(time.Millisecond)
		p.held[i] = p.held[i].Round(time.Millisecond)
	}
	return p.slowest, p.held
}

// parseTime reads the reply to TIME, seconds and microseconds.
func parseTime(reply string) (time.Time, bool) {
	f := strings.Split(reply, "\r\n")
	if len(f) < 5 || f[0] != "*2" {
		return time.Time{}, false
	}
	sec, err1 := strconv.ParseInt(f[2], 10, 64)
	usec, err2 := strconv.ParseInt(f[4], 10, 64)
	if err1 != nil || err2 != nil {
		return time.Time{}, false
	}
	return time.Unix(sec, usec*1000), true
}

// slowCommands returns the commands the server at addr logged as slower
// than 10 ms (SLOWLOG): each one's name, first key and microseconds.
func slowCommands(t *testing.T, addr string) string {
	v, err := resp.Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	log, err := v.Do("SLOWLOG", "GET", "20")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range log.Elems {
		if len(e.Elems) >= 4 && len(e.Elems[3].Elems) > 0 {
			args, _ := e.Elems[3].Strings()
			if len(args) > 2 {
				args = args[:2]
			}
			out = append(out, fmt.Sprintf("%s %d µs", strings.Join(args, " "), e.Elems[2].Int))
		}
	}
	return strings.Join(out, "; ")
}
