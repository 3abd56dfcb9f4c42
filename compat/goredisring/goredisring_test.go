package goredisring

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	goredis "github.com/redis/go-redis/v9"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
)

var sink int

func shardSets() []map[string]string {
	sets := []map[string]string{
		{"shard1": "127.0.0.1:7001", "shard2": "127.0.0.1:7002", "shard3": "127.0.0.1:7003"},
		{"a": "10.0.0.1:6379", "b": "10.0.0.2:6379", "cache-east-1": "10.0.1.1:6379", "cache-west-1": "10.0.2.1:6379", "\xffodd": "10.0.3.1:6379"},
	}
	big := map[string]string{}
	for i := range 16 {
		big[fmt.Sprintf("redis-%02d", i)] = fmt.Sprintf("127.0.0.1:%d", 7100+i)
	}
	return append(sets, big)
}

func testKeys(n int) []string {
	r := rand.New(rand.NewPCG(9, 9))
	keys := []string{"", "{", "}", "{}", "{}}", "{{}}", "foo{}{bar}", "foo{{bar}}zap", "{user1000}.following",
		"{user1000}.followers", "\xff{\x80}", strings.Repeat("k", 5000), "session:1", "session:5"}
	const special = "{}ab\x00\x80\xff"
	for i := 0; len(keys) < n; i++ {
		b := make([]byte, r.IntN(40))
		for j := range b {
			if i%2 == 0 {
				b[j] = special[r.IntN(len(special))]
			} else {
				b[j] = byte(r.UintN(256))
			}
		}
		keys = append(keys, string(b))
	}
	return keys
}

// TestAgainstGoRedisRing asks a real go-redis v9 Ring, through its public
// GetShardClientForKey, which shard each key goes to. No connection is
// made: the Ring picks a shard client without dialling, and the heartbeat
// is slowed so that no shard is marked down during the test.
func TestAgainstGoRedisRing(t *testing.T) {
	keys := testKeys(5000)
	for _, addrs := range shardSets() {
		t.Run(fmt.Sprintf("%d shards", len(addrs)), func(t *testing.T) {
			ring := goredis.NewRing(&goredis.RingOptions{Addrs: addrs, HeartbeatFrequency: time.Hour})
			t.Cleanup(func() { ring.Close() })
			p, err := New(addrs)
			if err != nil {
				t.Fatal(err)
			}
			mismatches := 0
			for _, k := range keys {
				c, err := ring.GetShardClientForKey(k)
				if err != nil {
					t.Fatal(err)
				}
				n, _ := p.Locate(k)
				if got := c.Options().Addr; got != n.Addr {
					if mismatches++; mismatches <= 5 {
						t.Errorf("key %q: go-redis picks %s, Locate %s", k, got, n.Addr)
					}
				}
			}
			t.Logf("%d keys, %d mismatches", len(keys), mismatches)
			if mismatches > 0 {
				t.Fatalf("%d of %d keys mismatched", mismatches, len(keys))
			}
		})
	}
}

// refBest is the documented rule written out plainly: tag, XXH64, score
// every shard, keep the highest.
func refBest(addrs map[string]string, key string) string {
	if s := strings.IndexByte(key, '{'); s >= 0 {
		if e := strings.IndexByte(key[s+1:], '}'); e > 0 {
			key = key[s+1 : s+1+e]
		}
	}
	kh := xxhash.Sum64String(key)
	best, top := "", uint64(0)
	for name := range addrs {
		x := kh ^ xxhash.Sum64String(name)
		x ^= x >> 12
		x ^= x << 25
		x ^= x >> 27
		x *= 2685821657736338717
		if best == "" || x > top {
			best, top = name, x
		}
	}
	return best
}

func TestMatchesReference(t *testing.T) {
	for _, addrs := range shardSets() {
		t.Run(fmt.Sprintf("%d shards", len(addrs)), func(t *testing.T) {
			p, _ := New(addrs)
			for _, k := range testKeys(2000) {
				n, _ := p.Locate(k)
				if want := refBest(addrs, k); n.ID != want {
					t.Fatalf("Locate(%q) = %s, reference %s", k, n.ID, want)
				}
				if i := p.Index([]byte(k)); p.Nodes()[i].ID != n.ID {
					t.Fatalf("Index(%q) = %d, not %s's position", k, i, n.ID)
				}
			}
		})
	}
}

func TestLocateNRanking(t *testing.T) {
	addrs := shardSets()[2]
	p, _ := New(addrs)
	for _, k := range testKeys(200) {
		all, err := p.LocateN(nil, k, len(addrs))
		if err != nil || len(all) != len(addrs) {
			t.Fatalf("LocateN = %v, %v", all, err)
		}
		// Removing the first shard must make the second the winner.
		rest := map[string]string{}
		for name, a := range addrs {
			if name != all[0].ID {
				rest[name] = a
			}
		}
		if want := refBest(rest, k); all[1].ID != want {
			t.Fatalf("LocateN(%q)[1] = %s, but without %s the key goes to %s", k, all[1].ID, all[0].ID, want)
		}
	}
	if _, err := p.LocateN(nil, "k", 0); !errors.Is(err, kolco.ErrBadCount) {
		t.Fatalf("n=0 err = %v", err)
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(nil); !errors.Is(err, kolco.ErrNoNodes) {
		t.Errorf("New(nil) err = %v", err)
	}
	if _, err := New(map[string]string{"": "a:1"}); !errors.Is(err, kolco.ErrBadNodeID) {
		t.Errorf("empty name err = %v", err)
	}
}

func TestNoAllocs(t *testing.T) {
	if bytestr.Copies {
		t.Skip("the purego build copies keys; zero allocations are promised for the default build")
	}
	p, _ := New(shardSets()[1])
	key := strings.Repeat("long-key-", 20)
	kb := []byte(key)
	dst := make([]kolco.Node, 0, 3)
	if a := testing.AllocsPerRun(100, func() { n, _ := p.Locate(key); sink += len(n.ID) + p.Index(kb) }); a != 0 {
		t.Errorf("Locate/Index allocate %v", a)
	}
	if a := testing.AllocsPerRun(100, func() { dst, _ = p.LocateN(dst[:0], key, 3) }); a != 0 {
		t.Errorf("LocateN allocates %v", a)
	}
}

func FuzzIndex(f *testing.F) {
	f.Add([]byte("{user1000}.following"), "a", "b")
	f.Add([]byte{}, "x", "\xff")
	f.Fuzz(func(t *testing.T, key []byte, a, b string) {
		addrs := map[string]string{a: "1:1", b: "2:2", "c": "3:3"}
		p, err := New(addrs)
		if err != nil {
			return
		}
		if got, want := p.Nodes()[p.Index(key)].ID, refBest(addrs, string(key)); got != want && xxhash.Sum64String(a) != xxhash.Sum64String(b) {
			t.Fatalf("Index picks %q, reference %q", got, want)
		}
	})
}

func BenchmarkLocate(b *testing.B) {
	key := "{user:12345}:profile"
	for _, n := range []int{3, 30, 300} {
		addrs := map[string]string{}
		for i := range n {
			addrs[fmt.Sprint("shard", i)] = fmt.Sprintf("10.0.0.%d:6379", i)
		}
		p, _ := New(addrs)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				nd, _ := p.Locate(key)
				sink += len(nd.ID)
			}
		})
	}
}
