package goredis_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/goredis"
	"github.com/kolco-dev/kolco/adapter/internal/servertest"
	"github.com/kolco-dev/kolco/adapter/shards"
	"github.com/kolco-dev/kolco/algo"
)

// spy records the live shards and the hash of go-redis's last call of
// NewConsistentHash. It never blocks the call: go-redis holds its ring's
// lock while it makes it.
type spy struct {
	mu      sync.Mutex
	live    []string
	hash    redis.ConsistentHash
	changed chan struct{}
}

func watch(opt *redis.RingOptions) *spy {
	s := &spy{changed: make(chan struct{}, 1)}
	inner := opt.NewConsistentHash
	opt.NewConsistentHash = func(live []string) redis.ConsistentHash {
		h := inner(live)
		s.mu.Lock()
		s.live, s.hash = slices.Sorted(slices.Values(live)), h
		s.mu.Unlock()
		select {
		case s.changed <- struct{}{}:
		default:
		}
		return h
	}
	return s
}

// waitLive waits until go-redis has made a hash over exactly live.
func (s *spy) waitLive(t *testing.T, live ...string) redis.ConsistentHash {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		s.mu.Lock()
		got, h := s.live, s.hash
		s.mu.Unlock()
		if slices.Equal(got, live) {
			return h
		}
		select {
		case <-s.changed:
		case <-deadline:
			t.Fatalf("go-redis's live shards are %v after 30s, want %v", got, live)
		}
	}
}

func testKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		switch i % 4 {
		case 0:
			keys[i] = fmt.Sprintf("user:{%d}:name%d", i%61, i)
		case 1:
			keys[i] = fmt.Sprintf("{}empty:%d", i)
		default:
			keys[i] = fmt.Sprintf("plain:%d", i)
		}
	}
	return keys
}

type fleet struct {
	servers map[string]*servertest.Server // by shard name
	nodes   []kolco.Node
	names   []string
}

func startFleet(t *testing.T, names ...string) *fleet {
	f := &fleet{servers: map[string]*servertest.Server{}, names: names}
	for _, name := range names {
		s := servertest.Redis(t)
		f.servers[name] = s
		f.nodes = append(f.nodes, kolco.Node{ID: name, Addr: s.Addr})
	}
	return f
}

// located returns the shard kolco locate names for each key, given the
// text go-redis hashes.
func (f *fleet) located(t *testing.T, dist string, keys []string) []string {
	tagged := make([]string, len(keys))
	for i, k := range keys {
		tagged[i] = shards.Tagged(k, [2]byte{'{', '}'})
	}
	path := filepath.Join(t.TempDir(), "nodes.txt")
	if err := os.WriteFile(path, []byte(strings.Join(f.names, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return servertest.Locate(t, tagged, "--algo", dist, "--nodes-file", path)
}

// checkOn checks that each key is stored on the server of its shard in
// owners.
func (f *fleet) checkOn(t *testing.T, keys, owners []string) {
	t.Helper()
	ctx := context.Background()
	placed := 0
	defer func() {
		if distinct := len(slices.Compact(slices.Sorted(slices.Values(owners)))); placed != distinct {
			t.Fatalf("keys on %d shards, placed on %d", placed, distinct)
		}
	}()
	for name, s := range f.servers {
		c := redis.NewClient(&redis.Options{Addr: s.Addr})
		var mine []string
		for i, k := range keys {
			if owners[i] == name {
				mine = append(mine, k)
			}
		}
		if len(mine) == 0 {
			continue // not a shard of this placement
		}
		placed++
		n, err := c.Exists(ctx, mine...).Result()
		c.Close()
		if err != nil || n != int64(len(mine)) {
			t.Fatalf("shard %s holds %d of its %d keys (%v)", name, n, len(mine), err)
		}
	}
}

func setAll(t *testing.T, rdb *redis.Ring, keys []string) {
	t.Helper()
	_, err := rdb.Pipelined(context.Background(), func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.Set(context.Background(), k, "v:"+k, 0)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// readable returns how many of keys read back their value through rdb.
func readable(t *testing.T, rdb *redis.Ring, keys []string) int {
	t.Helper()
	n := 0
	for _, k := range keys {
		v, err := rdb.Get(context.Background(), k).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatalf("get %q: %v", k, err)
		}
		if v == "v:"+k {
			n++
		}
	}
	return n
}

func newRing(t *testing.T, f *fleet, dist string) (*redis.Ring, *spy) {
	sh, err := goredis.New(shards.Config{Distribution: dist, HashTag: "{}"}, f.nodes...)
	if err != nil {
		t.Fatal(err)
	}
	opt := sh.Options(&redis.RingOptions{HeartbeatFrequency: 20 * time.Millisecond, DialTimeout: time.Second})
	s := watch(opt)
	rdb := redis.NewRing(opt)
	t.Cleanup(func() { rdb.Close() })
	return rdb, s
}

// TestShardDownAndBack sets keys through a go-redis Ring placed by jump on
// real redis servers, checks that each sits on the server kolco locate
// names, stops one server until go-redis's heartbeat marks it down, and
// checks that no key of another shard moves, that an app started while
// the shard is down places keys as the one that saw it go, and that when
// the shard is back every key is placed as before.
func TestShardDownAndBack(t *testing.T) {
	f := startFleet(t, "shard-a", "shard-b", "shard-c", "shard-d")
	keys := testKeys(4000)
	rdb, seen := newRing(t, f, "jump")
	whole := seen.waitLive(t, f.names...)
	setAll(t, rdb, keys)
	owners := f.located(t, "jump", keys)
	f.checkOn(t, keys, owners)

	var others, theirs []string
	for i, k := range keys {
		if owners[i] == "shard-b" {
			theirs = append(theirs, k)
		} else {
			others = append(others, k)
		}
	}
	rebuilt, _ := algo.New("jump", slices.DeleteFunc(slices.Clone(f.nodes), func(n kolco.Node) bool { return n.ID == "shard-b" }), algo.Options{})
	if moved := movedBy(rebuilt, keys, owners); moved == 0 {
		t.Fatal("a rebuild over the live shards moves no other shard's key: the test shows nothing")
	}

	f.servers["shard-b"].Stop()
	down := seen.waitLive(t, "shard-a", "shard-c", "shard-d")
	for i, k := range keys {
		got := down.Get(shards.Tagged(k, [2]byte{'{', '}'}))
		if owners[i] != "shard-b" && got != owners[i] || got == "shard-b" {
			t.Fatalf("with shard-b down, %q goes to %s; its owner is %s", k, got, owners[i])
		}
	}
	if n := readable(t, rdb, others); n != len(others) {
		t.Fatalf("with shard-b down, %d of the other shards' %d keys read back", n, len(others))
	}

	late, lateSeen := newRing(t, f, "jump")
	lateDown := lateSeen.waitLive(t, "shard-a", "shard-c", "shard-d")
	for _, k := range keys {
		tk := shards.Tagged(k, [2]byte{'{', '}'})
		if a, b := down.Get(tk), lateDown.Get(tk); a != b {
			t.Fatalf("%q: the app started while shard-b is down places it on %s, the other on %s", k, b, a)
		}
	}
	if n := readable(t, late, others); n != len(others) {
		t.Fatalf("through the app started late, %d of %d keys read back", n, len(others))
	}

	f.servers["shard-b"].Start()
	back := seen.waitLive(t, f.names...)
	for i, k := range keys {
		if got := back.Get(shards.Tagged(k, [2]byte{'{', '}'})); got != owners[i] || whole.Get(shards.Tagged(k, [2]byte{'{', '}'})) != got {
			t.Fatalf("with shard-b back, %q goes to %s, want %s", k, got, owners[i])
		}
	}
	setAll(t, rdb, theirs) // shard-b restarted empty
	f.checkOn(t, keys, owners)
}

// movedBy counts the keys that p places on another shard than owners, of
// those whose owner p has.
func movedBy(p algo.Placement, keys, owners []string) int {
	moved := 0
	for i, k := range keys {
		id, _ := p.LocateID(shards.Tagged(k, [2]byte{'{', '}'}))
		if owners[i] != "shard-b" && id != owners[i] {
			moved++
		}
	}
	return moved
}

// TestEveryKeyOnLocated checks keys with and without tags against kolco
// locate for more algorithms, history-independent ones included.
func TestEveryKeyOnLocated(t *testing.T) {
	f := startFleet(t, "r1", "r2", "r3")
	keys := testKeys(3000)
	for _, dist := range []string{"ring", "maglev", "anchor"} {
		t.Run(dist, func(t *testing.T) {
			for _, s := range f.servers {
				c := redis.NewClient(&redis.Options{Addr: s.Addr})
				if err := c.FlushAll(context.Background()).Err(); err != nil {
					t.Fatal(err)
				}
				c.Close()
			}
			rdb, seen := newRing(t, f, dist)
			seen.waitLive(t, f.names...)
			setAll(t, rdb, keys)
			f.checkOn(t, keys, f.located(t, dist, keys))
		})
	}
}
