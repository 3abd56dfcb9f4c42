package proxy

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
)

// FuzzRedisTxDifferential sends one random sequence of commands from two
// clients through kolco to three redis-servers and directly to one
// redis-server, one command at a time, and requires the same reply to
// each: plain commands (split ones, BLPOP, maps, sets, doubles and scripts
// of one hash-tag group among them), MULTI/EXEC/DISCARD with the keys of
// each transaction under one hash tag, WATCH and UNWATCH, and the other
// client's writes to watched keys between a WATCH and its EXEC. The seed's
// two low bits say which clients speak RESP3 (HELLO 3 first, its reply
// alike but for the id), so that the seeds cover RESP2, RESP3 and both at
// once. A command the proxy refuses (outside a transaction) must get an
// error naming the rule, "-ERR '<cmd>' is not supported by the proxy:
// <why>", and is not sent directly. The seed replays a sequence; each
// run's keys are its own.
func FuzzRedisTxDifferential(f *testing.F) {
	rs := []*redisServer{startRedis(f, 0), startRedis(f, 0), startRedis(f, 0)}
	one := startRedis(f, 0)
	s := startProxy(f, redisPoolYAML("  hash_tag: \"{}\"\n", rs...))
	for seed := range uint64(6) {
		f.Add(seed) // each a sequence of 300 commands
	}
	var runs atomic.Int64
	f.Fuzz(func(t *testing.T, seed uint64) {
		// The seeds run at once (go test runs fuzz targets after every
		// other test, one at a time; fuzzing ignores this): each run's
		// keys and connections are its own.
		t.Parallel()
		g := &txGen{rng: rand.New(rand.NewPCG(seed, 36)), ns: fmt.Sprint("d", runs.Add(1))}
		g.cl[0].reset()
		g.cl[1].reset()
		via := [2]*rc{dialRedis(t, s.Addr("p").String()), dialRedis(t, s.Addr("p").String())}
		direct := [2]*rc{dialRedis(t, one.addr), dialRedis(t, one.addr)}
		var history []string
		for who := range 2 {
			if seed>>who&1 == 0 {
				continue
			}
			got, want := via[who].do("HELLO", "3"), direct[who].do("HELLO", "3")
			if helloID.ReplaceAllString(got, "") != helloID.ReplaceAllString(want, "") {
				t.Fatalf("client %d's HELLO 3 through kolco: %q, directly: %q", who, got, want)
			}
			history = append(history, fmt.Sprintf("%d HELLO 3", who))
		}
		execs := map[string]int{}
		for range 300 {
			who := g.rng.IntN(2)
			args := g.next(who)
			if refusedCmd[args[0]] {
				got := via[who].do(args...)
				if !strings.HasPrefix(got, "-ERR '"+strings.ToLower(args[0])+"' is not supported by the proxy: ") {
					t.Fatalf("seed %d: client %d %q through kolco: %q, want the refusal naming its rule", seed, who, args, got)
				}
				continue
			}
			got, want := via[who].do(args...), direct[who].do(args...)
			history = append(history, fmt.Sprintf("%d %q -> %q", who, args, want))
			if got != want {
				t.Fatalf("seed %d: client %d %q through kolco: %q, directly: %q; the sequence:\n%s",
					seed, who, args, got, want, strings.Join(history, "\n"))
			}
			if args[0] == "EXEC" {
				execs[want[:2]]++
			}
		}
		t.Logf("EXEC replies by their start: %v", execs)
	})
}

// txGen generates the differential test's commands.
type txGen struct {
	rng *rand.Rand
	ns  string // the run's keys' prefix
	cl  [2]txClient
}

// txClient is what a generated client has open: a transaction and the
// group of its keys, the group it watches (-1 for none).
type txClient struct {
	multi        bool
	group, watch int
}

func (c *txClient) reset() { c.multi, c.group, c.watch = false, -1, -1 }

const txGroups = 4

// key returns key name of hash-tag group g.
func (g *txGen) key(group int, name string) string {
	return fmt.Sprintf("{%sg%d}%s", g.ns, group, name)
}

// next returns client who's next command.
func (g *txGen) next(who int) []string {
	c := &g.cl[who]
	r := g.rng.IntN(20)
	if c.multi {
		switch {
		case r < 3:
			c.reset()
			return []string{"EXEC"}
		case r == 3:
			c.reset()
			return []string{"DISCARD"}
		case r == 4:
			return []string{"PING"}
		}
		if c.group < 0 {
			c.group = g.rng.IntN(txGroups)
		}
		return g.command(c.group, c.group)
	}
	switch {
	case r < 3:
		c.multi, c.group = true, c.watch
		return []string{"MULTI"}
	case r == 3:
		if c.watch < 0 {
			c.watch = g.rng.IntN(txGroups)
		}
		args := []string{"WATCH", g.key(c.watch, "a")}
		if g.rng.IntN(2) == 0 {
			args = append(args, g.key(c.watch, "l"))
		}
		return args
	case r == 4:
		c.watch = -1
		return []string{"UNWATCH"}
	case r == 5:
		return []string{[]string{"EXEC", "DISCARD"}[g.rng.IntN(2)]}
	case r == 6 && g.rng.IntN(4) == 0:
		return [][]string{{"WAIT", "0", "0"}, {"CONFIG", "GET", "maxmemory"}, {"MOVE", g.key(0, "a"), "1"}}[g.rng.IntN(3)]
	}
	return g.command(g.rng.IntN(txGroups), g.rng.IntN(txGroups))
}

// refusedCmd are the refused commands the generator sends.
var refusedCmd = map[string]bool{"WAIT": true, "CONFIG": true, "MOVE": true}

// command returns a command on keys of groups g1 and, for the commands of
// two keys, g2.
func (g *txGen) command(g1, g2 int) []string {
	a, b, l := g.key(g1, "a"), g.key(g2, "b"), g.key(g1, "l")
	h, s, z := g.key(g1, "h"), g.key(g1, "s"), g.key(g1, "z")
	v := fmt.Sprint(g.rng.IntN(5))
	switch g.rng.IntN(19) {
	case 12:
		return []string{"HSET", h, "f" + v, v}
	case 13:
		return []string{"HGETALL", h} // a map in RESP3
	case 14:
		return []string{"SADD", s, v} // an intset, in the same order on any server
	case 15:
		return []string{"SMEMBERS", s} // a set in RESP3
	case 16:
		return []string{"ZINCRBY", z, "0.5", "m" + v} // a double in RESP3
	case 17:
		return []string{"ZRANGE", z, "0", "-1", "WITHSCORES"}
	case 18:
		return []string{"EVAL", "redis.call('incr', KEYS[1]); return {redis.call('get', KEYS[1]), redis.call('exists', KEYS[2])}", "2", a, l}
	}
	switch g.rng.IntN(12) {
	case 0:
		return []string{"SET", a, v}
	case 1:
		return []string{"GET", a}
	case 2:
		return []string{"INCR", []string{a, l}[g.rng.IntN(2)]}
	case 3:
		return []string{"DEL", a, b}
	case 4:
		return []string{"LPUSH", l, v}
	case 5:
		return []string{"LRANGE", l, "0", "-1"}
	case 6:
		return []string{"MGET", a, b}
	case 7:
		return []string{"EXISTS", a, b, l}
	case 8:
		return []string{"APPEND", b, v}
	case 9:
		return []string{"MSET", a, v, b, v}
	case 10:
		return []string{"BLPOP", l, "0.01"} // blocks, but in a transaction
	}
	return []string{"GETDEL", b}
}
