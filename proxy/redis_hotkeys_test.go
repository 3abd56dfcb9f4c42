package proxy

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/storecheck"
	"github.com/kolco-dev/kolco/proxy/redis"
)

// hotRedisYAML is a Redis pool's settings with the hot-key cache on.
const hotRedisYAML = "  traffic: {enabled: true, top_keys: 64}\n  hot_keys: {enabled: true}\n"

// TestHotKeysRedis: with the cache on, a hot key's GET is answered by the
// proxy (the server counts no GET of it, only the PINGs that confirm the
// value), and a write straight to the server is seen by the next GET
// through the proxy, as is a delete and a FLUSHALL: the server's tracking
// invalidates them.
func TestHotKeysRedis(t *testing.T) {
	t.Parallel()
	r := startRedis(t, 0)
	s := startProxy(t, redisPoolYAML(hotRedisYAML, r))
	c := dialRedis(t, s.Addr("p").String())
	direct := dialRedis(t, r.addr)
	p := s.testPool("p")
	if got := c.do("SET", "hot", "v1"); got != "+OK\r\n" {
		t.Fatalf("SET: %q", got)
	}
	eventually(t, "the cache to answer the hot key", func() bool {
		if got := c.do("GET", "hot"); got != "$2\r\nv1\r\n" {
			t.Fatalf("GET: %q", got)
		}
		return p.hot.hits.Load() > 0
	})
	gets := redisCalls(t, r, "get")
	for range 10 {
		if got := c.do("GET", "hot"); got != "$2\r\nv1\r\n" {
			t.Fatalf("GET from the cache: %q", got)
		}
	}
	if n := redisCalls(t, r, "get") - gets; n != 0 {
		t.Errorf("the server counted %d GETs of the cached key, want 0", n)
	}
	for _, step := range []struct {
		args []string
		want string
	}{
		{[]string{"SET", "hot", "v2"}, "$2\r\nv2\r\n"},
		{[]string{"APPEND", "hot", "x"}, "$3\r\nv2x\r\n"},
		{[]string{"DEL", "hot"}, "$-1\r\n"},
		{[]string{"SET", "hot", "v3"}, "$2\r\nv3\r\n"},
		{[]string{"FLUSHALL"}, "$-1\r\n"},
	} {
		// The cache holds a value first: a GET of it, then one answered.
		c.do("GET", "hot")
		c.do("GET", "hot")
		direct.do(step.args...)
		if got := c.do("GET", "hot"); got != step.want {
			t.Errorf("after %v straight to the server: GET %q, want %q", step.args, got, step.want)
		}
	}
	var st PoolStatus
	st.Traffic = &TrafficStatus{HotCache: p.hot.status()}
	if h := st.Traffic.HotCache; h.Hits < 10 || h.Invalidations < 4 || len(h.Untracked) != 0 {
		t.Errorf("hot cache %+v, want at least 10 hits and 4 invalidations, every server tracked", h)
	}
}

// TestHotKeysRedisUntracked: a server that refuses CLIENT TRACKING (here
// because CLIENT is renamed away, as before Redis 6 it did not exist)
// keeps its keys uncached - each GET reaches it - with a line logged and
// the server named in /v1/pools, while the other server's hot key is
// answered by the proxy.
func TestHotKeysRedisUntracked(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0, "--rename-command", "CLIENT", "client-renamed")}
	s, logs := startProxyLogged(t, "kolco:\n  admin_listen: \":0\"\n"+redisPoolYAML(hotRedisYAML, rs...))
	p := s.testPool("p")
	tracked, untracked := keysApart(t, p)
	if ownerOf(p, tracked) == rs[1].addr {
		tracked, untracked = untracked, tracked
	}
	c := dialRedis(t, s.Addr("p").String())
	eventually(t, "the refusal logged", func() bool {
		return len(logs.lines(t, "hot keys: the server refuses CLIENT TRACKING, so its keys are not cached")) == 1
	})
	eventually(t, "the tracked server's key answered by the cache", func() bool {
		c.do("GET", tracked)
		c.do("GET", untracked)
		return p.hot.hits.Load() > 0 && slices.Contains(p.hot.cached(), untracked)
	})
	gets := redisCalls(t, rs[1], "get")
	for range 10 {
		c.do("GET", untracked)
	}
	if n := redisCalls(t, rs[1], "get") - gets; n != 10 {
		t.Errorf("the untracked server counted %d GETs of 10", n)
	}
	var st PoolStatus
	adminGet(t, s, "/v1/pools/p", "", &st)
	if h := st.Traffic.HotCache; h == nil || !slices.Equal(h.Untracked, []string{"r1"}) {
		t.Errorf("/v1/pools/p: hot cache %+v, want r1 untracked", h)
	}
}

// TestHotKeysRedisLinearizable: eight clients doing SET, GET, INCR,
// APPEND, DEL and EXPIRE on 16 keys, half through a pool with the cache
// on and half through another proxy's pool over the same two servers
// without it: the history of every client is linearizable (porcupine),
// and the cache answered reads meanwhile. A read answered from a value
// whose invalidation was still on its way would not be.
func TestHotKeysRedisLinearizable(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0)}
	cached := startProxy(t, redisPoolYAML("  distribution: ring\n"+hotRedisYAML, rs...))
	plain := startProxy(t, redisPoolYAML("  distribution: ring\n", rs...))
	p := cached.testPool("p")
	// Reads alone before the run, which leave the keys as the model
	// starts them, absent, make them the hottest.
	c := dialRedis(t, cached.Addr("p").String())
	eventually(t, "the cache to answer reads of every key", func() bool {
		for i := range 16 {
			c.do("GET", "lin:"+strconv.Itoa(i))
		}
		return len(p.hot.cached()) == 16 && p.hot.hits.Load() > 0
	})
	hits := p.hot.hits.Load()
	run := storecheck.Start(storecheck.Config{Addrs: []string{cached.Addr("p").String(), plain.Addr("p").String()}, Keys: 16, Seed: 2, Prefix: "lin:", Limit: 1500})
	history := run.Wait()
	run.Stop()
	t.Logf("%d reads answered by the cache, %d sent to the servers after a write, %d invalidations", p.hot.hits.Load()-hits, p.hot.misses.Load(), p.hot.invalidations.Load())
	if p.hot.hits.Load()-hits < 100 {
		t.Errorf("the cache answered %d reads: the test tests little", p.hot.hits.Load()-hits)
	}
	checkHistory(t, run, history)
}

// redisCalls returns the calls of cmd the server has counted.
func redisCalls(t *testing.T, r *redisServer, cmd string) int {
	t.Helper()
	conn, err := net.DialTimeout("tcp", r.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := conn.Write([]byte("INFO commandstats\r\n")); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	head, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(head, "$") {
		t.Fatalf("INFO: %q %v", head, err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(head[1:]))
	body := make([]byte, n+2)
	if _, err := io.ReadFull(br, body); err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(body), "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":calls="); ok {
			calls, _, _ := strings.Cut(rest, ",")
			v, _ := strconv.Atoi(calls)
			return v
		}
	}
	return 0
}

// TestHotKeysRedisBalanceZipf: as TestHotKeysBalanceZipf, over ten
// redis-servers: 300 000 GETs of a Zipf 1.2 law over 100 000 keys (100 000
// with the cache off), pipelined a hundred at a time by four clients. With the cache on, a
// server counts the GETs of the keys the cache does not hold and those
// that fill it - the busiest within 1.1 times the mean, where with the
// cache off it is not - and the PINGs that confirm the cache's values, at
// most one a millisecond to each server (redisPingEvery): the busiest
// server counting them is within 1.1 times the mean too. (At one PING a
// round trip, the hottest server had a fifth more PINGs than the mean,
// and counting them was 1.085-1.09 times the mean on a quiet machine,
// 1.10-1.13 with other tests running beside it.)
func TestHotKeysRedisBalanceZipf(t *testing.T) {
	const servers, keys, s, n, nOff = 10, 100_000, 1.2, 300_000, 100_000
	rs := make([]*redisServer, servers)
	for i := range rs {
		rs[i] = startRedis(t, 0)
	}
	base := "  distribution: jump\n  traffic: {enabled: true, top_keys: 1024}\n"
	srv := startProxy(t, redisPoolYAML(base, rs...))
	addr := srv.Addr("p").String()
	off, _ := redisServerLoad(t, rs, func() { zipfRedisGets(t, addr, keys, s, nOff, 1) })
	reload(t, srv, redisPoolYAML(base+"  hot_keys: {enabled: true, size: 1024}\n", rs...))
	p := srv.testPool("p")
	eventually(t, "the cache to follow the hottest keys", func() bool {
		zipfRedisGets(t, addr, keys, s, 5000, 2)
		return len(p.hot.cached()) == 1024
	})
	hits := p.hot.hits.Load()
	pings := make([]int, len(rs))
	for i, r := range rs {
		pings[i] = redisCalls(t, r, "ping")
	}
	on, all := redisServerLoad(t, rs, func() { zipfRedisGets(t, addr, keys, s, n, 3) })
	for i, r := range rs {
		pings[i] = redisCalls(t, r, "ping") - pings[i]
	}
	t.Logf("the PINGs each server had: %v", pings)
	t.Logf("cache off: busiest server %.3f times the mean, %d GETs reached the servers of %d", off.peak, off.total, nOff)
	t.Logf("cache on:  busiest server %.3f times the mean, %d GETs reached the servers of %d (%d answered by the proxy)", on.peak, on.total, n, p.hot.hits.Load()-hits)
	t.Logf("cache on, the PINGs counted: busiest server %.3f times the mean of %d commands", all.peak, all.total)
	if off.peak <= 1.1 {
		t.Errorf("cache off: the busiest server had %.3f times the mean: the workload shows no hot server to spread", off.peak)
	}
	if on.peak > 1.1 {
		t.Errorf("cache on: the busiest server had %.3f times the mean of the GETs, want at most 1.1", on.peak)
	}
	if all.peak > 1.1 {
		t.Errorf("cache on: the busiest server had %.3f times the mean of the commands, the PINGs counted, want at most 1.1", all.peak)
	}
}

// redisServerLoad runs work and returns the GETs each server processed
// meanwhile, and its commands of every kind.
func redisServerLoad(t *testing.T, rs []*redisServer, work func()) (gets, all load) {
	count := func(r *redisServer) uint64 {
		info := dialRedis(t, r.addr).do("INFO", "stats")
		_, rest, _ := strings.Cut(info, "total_commands_processed:")
		v, _, _ := strings.Cut(rest, "\r\n")
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("INFO stats: %q", info)
		}
		return n
	}
	beforeGets, beforeAll := make([]uint64, len(rs)), make([]uint64, len(rs))
	for i, r := range rs {
		beforeGets[i], beforeAll[i] = uint64(redisCalls(t, r, "get")), count(r)
	}
	work()
	var peakGets, peakAll uint64
	for i, r := range rs {
		g := uint64(redisCalls(t, r, "get")) - beforeGets[i]
		a := count(r) - beforeAll[i] - 2 // the INFOs before
		gets.total, all.total = gets.total+g, all.total+a
		peakGets, peakAll = max(peakGets, g), max(peakAll, a)
	}
	gets.peak = float64(peakGets) * float64(len(rs)) / float64(gets.total)
	all.peak = float64(peakAll) * float64(len(rs)) / float64(all.total)
	return gets, all
}

// zipfRedisGets is zipfGets for a Redis pool.
func zipfRedisGets(t *testing.T, addr string, keys int, s float64, n int, seed uint64) {
	const clients, batch = 4, 100
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Go(func() {
			conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(5 * time.Minute))
			rr := redis.NewReplyReader(bufio.NewReader(conn), redis.ReplyLimits{})
			z := rand.NewZipf(rand.New(rand.NewPCG(seed, uint64(i))), s, 1, uint64(keys-1))
			var req, reply []byte
			for sent := 0; sent < n/clients; sent += batch {
				req = req[:0]
				for range batch {
					k := fmt.Sprint("key:", z.Uint64())
					req = fmt.Appendf(req, "*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(k), k)
				}
				if _, err := conn.Write(req); err != nil {
					errs <- err
					return
				}
				for range batch {
					if reply, _, err = rr.Read(reply[:0], nil); err != nil {
						errs <- err
						return
					}
					if redis.IsError(reply) {
						errs <- fmt.Errorf("GET: %q", reply)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestHotKeysRedisPassword: a pool whose servers want a password, in a
// database other than 0: the trackers' connections give the password and
// select the database as the pool's do, so the cache answers, and a write
// straight to the server in that database is seen by the next GET.
func TestHotKeysRedisPassword(t *testing.T) {
	t.Parallel()
	r := startRedis(t, 0, "--requirepass", "sesame")
	s := startProxy(t, redisPoolYAML("  redis_auth: sesame\n  redis_db: 3\n"+hotRedisYAML, r))
	c := dialRedis(t, s.Addr("p").String())
	c.do("AUTH", "sesame")
	c.do("SET", "hot", "v1")
	p := s.testPool("p")
	eventually(t, "the cache to answer the hot key", func() bool {
		if got := c.do("GET", "hot"); got != "$2\r\nv1\r\n" {
			t.Fatalf("GET: %q", got)
		}
		return p.hot.hits.Load() > 0
	})
	direct := dialRedis(t, r.addr)
	direct.do("AUTH", "sesame")
	direct.do("SELECT", "3")
	direct.do("SET", "hot", "v2")
	if got := c.do("GET", "hot"); got != "$2\r\nv2\r\n" {
		t.Errorf("after a SET straight to the server: GET %q, want v2", got)
	}
}

// TestHotKeysRedisServerRestart: a server that goes away drops its
// values and is named untracked, with one line logged; back, it is
// tracked again, and the cache answers its keys as it holds them now,
// not as it held them before.
func TestHotKeysRedisServerRestart(t *testing.T) {
	t.Parallel()
	r := startRedis(t, 0)
	s, logs := startProxyLogged(t, redisPoolYAML("  timeout: 2000\n"+hotRedisYAML, r))
	c := dialRedis(t, s.Addr("p").String())
	p := s.testPool("p")
	c.do("SET", "hot", "before")
	eventually(t, "the cache to answer the hot key", func() bool {
		c.do("GET", "hot")
		return p.hot.hits.Load() > 0
	})
	r.stop()
	eventually(t, "the server untracked", func() bool { return slices.Equal(p.hot.front.untracked(), []string{"r0"}) })
	r.start(t)
	eventually(t, "the server tracked again", func() bool { return len(p.hot.front.untracked()) == 0 })
	if n := len(logs.lines(t, "hot keys: the server's tracking connection failed: its keys are not cached until it is back")); n != 1 {
		t.Errorf("the loss logged %d times, want once", n)
	}
	hits := p.hot.hits.Load()
	eventually(t, "the cache to answer the hot key again", func() bool {
		if got := c.do("GET", "hot"); got != "$-1\r\n" {
			t.Fatalf("GET after the restart: %q, want the restarted server's nothing", got)
		}
		return p.hot.hits.Load() > hits
	})
}
