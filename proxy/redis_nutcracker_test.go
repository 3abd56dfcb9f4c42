package proxy

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// redisStream returns a request stream over keys from a fixed seed:
// single-key commands of every type (so that some meet a key of another
// type and fail with WRONGTYPE), the commands nutcracker splits, commands
// of several keys under one hash tag, scripts, and the server's own
// errors. It ends with a SET of every key, so that each is stored
// somewhere. Every reply is deterministic: no TTLs, no random members,
// no hash tables large enough to iterate in the server's seeded order.
func redisStream(keys []string, n int) [][]string {
	r := rand.New(rand.NewPCG(5, 8))
	k := func() string { return keys[r.IntN(len(keys))] }
	ks := func(max int) []string {
		out := make([]string, 1+r.IntN(max))
		for i := range out {
			out[i] = k()
		}
		return out
	}
	tagged := func(names ...string) []string {
		tag := r.IntN(20)
		for i, n := range names {
			names[i] = fmt.Sprintf("{g%d}%s", tag, n)
		}
		return names
	}
	v := func() string { return fmt.Sprint(r.IntN(1000)) }
	gens := []func() []string{
		func() []string { return []string{"SET", k(), v()} },
		func() []string { return []string{"GET", k()} },
		func() []string { return append([]string{"MGET"}, ks(20)...) },
		func() []string {
			args := []string{"MSET"}
			for _, key := range ks(10) {
				args = append(args, key, v())
			}
			return args
		},
		func() []string { return append([]string{[]string{"DEL", "TOUCH", "UNLINK"}[r.IntN(3)]}, ks(8)...) },
		// nutcracker does not split EXISTS (TestRedisNutcrackerDifferences).
		func() []string { return []string{"EXISTS", k()} },
		func() []string { return []string{[]string{"INCR", "DECR", "STRLEN", "GETDEL"}[r.IntN(4)], k()} },
		func() []string { return []string{[]string{"APPEND", "GETSET", "SETNX", "INCRBY"}[r.IntN(4)], k(), v()} },
		func() []string { return []string{"HSET", k(), fmt.Sprint("f", r.IntN(4)), v()} },
		func() []string {
			return []string{[]string{"HGETALL", "HLEN", "LLEN", "SCARD", "ZCARD"}[r.IntN(5)], k()}
		},
		func() []string { return []string{"LPUSH", k(), v()} },
		func() []string { return []string{"LRANGE", k(), "0", "-1"} },
		func() []string { return []string{"SADD", k(), v()} },
		func() []string { return []string{"ZADD", k(), v(), v()} },
		func() []string { return []string{"ZRANGE", k(), "0", "-1", "WITHSCORES"} },
		func() []string { return []string{"SET", k(), v(), "NX", "XX"} }, // the server's syntax error
		func() []string { return []string{"EXPIRE", k(), "100000"} },
		func() []string { return []string{"PERSIST", k()} },
		func() []string { return append([]string{"SADD"}, tagged("a", v(), v())...) },
		func() []string {
			return append([]string{[]string{"SINTER", "SUNION", "SDIFF"}[r.IntN(3)]}, tagged("a", "b")...)
		},
		func() []string { return append([]string{"SUNIONSTORE"}, tagged("a", "a", "b")...) },
		func() []string { return append([]string{"RPOPLPUSH"}, tagged("l", "m")...) },
		func() []string { return append([]string{"LPUSH"}, tagged("l", v())...) },
		func() []string {
			return append([]string{"EVAL", "return redis.call('incr', KEYS[1])", "1"}, tagged("n")...)
		},
		func() []string {
			return append([]string{"EVAL", "return {KEYS[1], KEYS[2], ARGV[1]}", "2"}, tagged("x", "y", "z")...)
		},
		func() []string { return []string{"EVALSHA", "0123456789012345678901234567890123456789", "1", k()} },
	}
	reqs := make([][]string, 0, n+len(keys))
	for range n {
		reqs = append(reqs, gens[r.IntN(len(gens))]())
	}
	for _, key := range keys {
		reqs = append(reqs, []string{"SET", key, key})
	}
	return reqs
}

// runRedisStream sends reqs to addr in pipelined batches of 1 to 24
// requests from a fixed seed, and returns the replies.
func runRedisStream(t *testing.T, addr string, reqs [][]string) []string {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	c := dialRedis(t, addr)
	out := make([]string, 0, len(reqs))
	for len(out) < len(reqs) {
		batch := reqs[len(out):min(len(reqs), len(out)+1+r.IntN(24))]
		for _, req := range batch {
			c.send(req...)
		}
		for _, req := range batch {
			reply, err := c.read()
			if err != nil {
				t.Fatalf("%s: %q: %v", addr, req, err)
			}
			out = append(out, reply)
		}
	}
	return out
}

// redisHolders returns, for each key, the index of the one server holding
// it in database db (-1 for none, -2 for several).
func redisHolders(t *testing.T, rs []*redisServer, keys []string, password string, db int) []int {
	at := make([]int, len(keys))
	for i := range at {
		at[i] = -1
	}
	for si, s := range rs {
		c := dialServer(t, s, password)
		if got := c.do("SELECT", fmt.Sprint(db)); got != "+OK\r\n" {
			t.Fatalf("SELECT %d on %s: %q", db, s.addr, got)
		}
		for _, k := range keys {
			c.send("EXISTS", k)
		}
		for i := range keys {
			if c.do1() != ":1\r\n" {
				continue
			}
			if at[i] == -1 {
				at[i] = si
			} else {
				at[i] = -2
			}
		}
	}
	return at
}

// do1 reads one reply of a pipeline, failing the test on an error.
func (c *rc) do1() string {
	c.t.Helper()
	reply, err := c.read()
	if err != nil {
		c.t.Fatal(err)
	}
	return reply
}

func flushRedis(t *testing.T, rs []*redisServer, password string) {
	for _, s := range rs {
		if got := dialServer(t, s, password).do("FLUSHALL"); got != "+OK\r\n" {
			t.Fatalf("FLUSHALL on %s: %q", s.addr, got)
		}
	}
}

// dialServer connects to a server directly, authenticated with password
// when it is not empty.
func dialServer(t *testing.T, s *redisServer, password string) *rc {
	c := dialRedis(t, s.addr)
	if password != "" {
		if got := c.do("AUTH", password); got != "+OK\r\n" {
			t.Fatalf("AUTH on %s: %q", s.addr, got)
		}
	}
	return c
}

// TestRedisDifferentialNutcracker sends the same request stream through
// nutcracker and through kolco, each in front of the same redis-servers
// with the same pool, and requires the same reply to every request and
// the same server for every key. What differs on purpose is
// TestRedisNutcrackerDifferences'.
func TestRedisDifferentialNutcracker(t *testing.T) {
	t.Parallel()
	needBinary(t, "nutcracker")
	for _, pool := range []struct {
		name, settings string
		password       string // redis_auth, and the servers' requirepass
		db             int
	}{
		{"ketama default hash", "  distribution: ketama\n", "", 0},
		{"ketama md5", "  hash: md5\n  distribution: ketama\n", "", 0},
		{"modula murmur", "  hash: murmur\n  distribution: modula\n", "", 0},
		{"redis_auth", "  redis_auth: s3cret\n", "s3cret", 0},
		// nutcracker selects no database when it authenticates too
		// (TestRedisNutcrackerDatabaseWithAuth).
		{"redis_db", "  redis_db: 2\n", "", 2},
	} {
		t.Run(pool.name, func(t *testing.T) {
			var extra []string
			if pool.password != "" {
				extra = []string{"--requirepass", pool.password}
			}
			rs := []*redisServer{startRedis(t, 0, extra...), startRedis(t, 0, extra...), startRedis(t, 0, extra...), startRedis(t, 0, extra...)}
			settings := "  redis: true\n  hash_tag: \"{}\"\n  timeout: 10000\n" + pool.settings +
				fmt.Sprintf("  servers:\n   - %s:1\n   - %s:2\n   - %s:1 cache-c\n   - %s:3\n", rs[0].addr, rs[1].addr, rs[2].addr, rs[3].addr)
			ncListen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			startNutcracker(t, "p:\n  listen: "+ncListen+"\n"+settings, ncListen)
			s := startProxy(t, "p:\n  listen: 127.0.0.1:0\n"+settings)

			keys := diffKeys(300)
			reqs := redisStream(keys, 1500)
			if pool.password != "" {
				reqs = append([][]string{{"AUTH", pool.password}}, reqs...)
			}
			flushRedis(t, rs, pool.password)
			ncReplies := runRedisStream(t, ncListen, reqs)
			ncAt := redisHolders(t, rs, keys, pool.password, pool.db)
			flushRedis(t, rs, pool.password)
			kReplies := runRedisStream(t, s.Addr("p").String(), reqs)
			kAt := redisHolders(t, rs, keys, pool.password, pool.db)
			compareRuns(t, reqs, ncReplies, kReplies, keys, ncAt, kAt, len(rs))
		})
	}
}

// compareRuns fails the test for every reply and placement that differs
// between nutcracker's run and kolco's, and when the keys did not reach
// every server or the stream met no error.
func compareRuns(t *testing.T, reqs [][]string, ncReplies, kReplies, keys []string, ncAt, kAt []int, servers int) {
	t.Helper()
	diffs, errs := 0, 0
	for i := range reqs {
		if strings.HasPrefix(kReplies[i], "-") {
			errs++
		}
		if ncReplies[i] != kReplies[i] {
			if diffs++; diffs <= 5 {
				t.Errorf("request %d %.80q:\nnutcracker %.200q\nkolco      %.200q", i, reqs[i], ncReplies[i], kReplies[i])
			}
		}
	}
	moved, spread := 0, map[int]int{}
	for i := range keys {
		spread[kAt[i]]++
		if ncAt[i] != kAt[i] || kAt[i] < 0 {
			if moved++; moved <= 5 {
				t.Errorf("key %q: nutcracker put it on %d, kolco on %d", keys[i], ncAt[i], kAt[i])
			}
		}
	}
	if diffs+moved > 0 {
		t.Fatalf("%d replies and %d placements differ out of %d requests and %d keys", diffs, moved, len(reqs), len(keys))
	}
	if len(spread) < servers || errs == 0 {
		t.Fatalf("keys reached %d of %d servers (%v), %d error replies: the stream does not test what it should", len(spread), servers, spread, errs)
	}
	t.Logf("%d requests (%d answered with an error), %d keys: identical replies and placement; keys per server %v",
		len(reqs), errs, len(keys), spread)
}
