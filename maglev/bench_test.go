package maglev

import (
	"fmt"
	"testing"

	"github.com/kolco-dev/kolco"
)

var (
	sinkNode  kolco.Node
	sinkNodes []kolco.Node
)

var benchSizes = []int{10, 100, 1000, 10000}

func benchKeys() []string {
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprintf("user:%d:profile", i)
	}
	return keys
}

func BenchmarkLocate(b *testing.B) {
	keys := benchKeys()
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			tab, _ := New(mkNodes(n), Config{})
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				sinkNode, _ = tab.Locate(keys[i&1023])
				i++
			}
		})
	}
}

func BenchmarkLocateN3(b *testing.B) {
	keys := benchKeys()
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			tab, _ := New(mkNodes(n), Config{})
			dst := make([]kolco.Node, 0, 3)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				sinkNodes, _ = tab.LocateN(dst[:0], keys[i&1023], 3)
				i++
			}
		})
	}
}

// BenchmarkAddRemove measures one Add and one Remove of a node, each a
// rebuild of the 65537-entry table.
func BenchmarkAddRemove(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			tab, _ := New(mkNodes(n), Config{})
			extra := kolco.Node{ID: "extra"}
			b.ReportAllocs()
			for b.Loop() {
				if err := tab.Add(extra); err != nil {
					b.Fatal(err)
				}
				if err := tab.Remove(extra.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
