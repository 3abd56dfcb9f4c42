package gomemcache_test

import (
	"fmt"
	"net"
	"testing"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/gomemcache"
	"github.com/kolco-dev/kolco/adapter/shards"
	"github.com/kolco-dev/kolco/algo"
)

var (
	sinkAddr  net.Addr
	sinkIndex int
)

func benchNodes(n int) []kolco.Node {
	nodes := make([]kolco.Node, n)
	for i := range nodes {
		nodes[i] = kolco.Node{ID: fmt.Sprintf("cache-%02d", i), Addr: fmt.Sprintf("10.0.0.%d:11211", i+1)}
	}
	return nodes
}

// BenchmarkPickServer compares, over 10 servers, the bare placement's
// lookup, the adapter's, and gomemcache's own crc32 % N selector.
func BenchmarkPickServer(b *testing.B) {
	nodes := benchNodes(10)
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprintf("user:%d:profile", i)
	}
	for _, dist := range []string{"ring", "jump", "maglev"} {
		p, _ := algo.New(dist, nodes, algo.Options{})
		b.Run(dist+"/placement", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				sinkIndex, _ = p.LocateIndex(keys[i&1023])
			}
		})
		sel, _ := gomemcache.New(shards.Config{Distribution: dist}, nodes...)
		b.Run(dist+"/adapter", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				sinkAddr, _ = sel.PickServer(keys[i&1023])
			}
		})
	}
	var list memcache.ServerList
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.Addr
	}
	if err := list.SetServers(addrs...); err != nil {
		b.Fatal(err)
	}
	b.Run("gomemcache-serverlist", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			sinkAddr, _ = list.PickServer(keys[i&1023])
		}
	})
}
