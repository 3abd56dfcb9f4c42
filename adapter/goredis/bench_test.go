package goredis_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/goredis"
	"github.com/kolco-dev/kolco/adapter/shards"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/compat"
)

var (
	sinkName  string
	sinkIndex int
)

func shardNodes(n int) ([]kolco.Node, []string) {
	nodes := make([]kolco.Node, n)
	names := make([]string, n)
	for i := range nodes {
		names[i] = fmt.Sprintf("shard-%02d", i)
		nodes[i] = kolco.Node{ID: names[i], Addr: fmt.Sprintf("10.0.0.%d:6379", i+1)}
	}
	return nodes, names
}

// TestGetDoesNotAllocate checks the lookup go-redis makes per command,
// with every shard live and with the owner of the key down.
func TestGetDoesNotAllocate(t *testing.T) {
	nodes, names := shardNodes(10)
	for _, dist := range []string{"ring", "jump", "anchor"} {
		sh, err := goredis.New(shards.Config{Distribution: dist, HashTag: "{}"}, nodes...)
		if err != nil {
			t.Fatal(err)
		}
		h := sh.NewConsistentHash(names)
		owner := h.Get("user:42")
		var live []string
		for _, n := range names {
			if n != owner {
				live = append(live, n)
			}
		}
		down := sh.NewConsistentHash(live)
		hashes := map[string]redis.ConsistentHash{"all live": h, "owner down": down}
		if raceEnabled {
			delete(hashes, "owner down") // its pooled buffer is dropped at random
		}
		for name, h := range hashes {
			if n := testing.AllocsPerRun(1000, func() { sinkName = h.Get("user:42") }); n != 0 {
				t.Errorf("%s, %s: %v allocations per Get", dist, name, n)
			}
		}
	}
}

// BenchmarkGet compares, over 10 shards, the bare placement's lookup, the
// adapter's, and go-redis's own rendezvous hash (as compat/goredisring
// reproduces it; go-redis's is internal).
func BenchmarkGet(b *testing.B) {
	nodes, names := shardNodes(10)
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprintf("user:%d:profile", i)
	}
	for _, dist := range []string{"ring", "jump", "maglev"} {
		p, _ := algo.New(dist, nodes, algo.Options{})
		b.Run(dist+"/placement", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				sinkIndex, _ = p.LocateIndex(keys[i&1023])
			}
		})
		sh, _ := goredis.New(shards.Config{Distribution: dist, HashTag: "{}"}, nodes...)
		h := sh.NewConsistentHash(names)
		b.Run(dist+"/adapter", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				sinkName = h.Get(keys[i&1023])
			}
		})
	}
	var servers []string
	for _, n := range nodes {
		servers = append(servers, n.ID+"="+n.Addr)
	}
	rendezvous, err := compat.Build("goredis", compat.Input{Servers: strings.Join(servers, ",")})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("goredis-rendezvous", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			n, _ := rendezvous.Locate(keys[i&1023])
			sinkName = n.ID
		}
	})
}
