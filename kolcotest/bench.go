package kolcotest

import (
	"strconv"
	"testing"

	"github.com/kolco-dev/kolco"
)

// BenchSizes are the node counts [Benchmark] measures.
var BenchSizes = []int{10, 100, 1000, 10000}

// sink keeps benchmark results alive.
var sink *kolco.Node

// Benchmark measures a placement the same way for every algorithm, so that
// figures compare: Locate, LocateN(n=3) into a reused slice, and one
// membership change (Add then Remove of one node, reported per pair) at
// each of [BenchSizes] nodes (up to MaxNodes).
func Benchmark(b *testing.B, a Algorithm) {
	keys := Keys(1 << 12)
	for _, size := range BenchSizes {
		if a.MaxNodes > 0 && size > a.MaxNodes {
			continue
		}
		nodes := Nodes(size)
		name := "nodes=" + strconv.Itoa(size)
		b.Run("Locate/"+name, func(b *testing.B) {
			p := benchBuild(b, a, nodes)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				sink, _ = p.Locate(keys[i&(len(keys)-1)])
			}
		})
		b.Run("LocateN3/"+name, func(b *testing.B) {
			p := benchBuild(b, a, nodes)
			dst := make([]kolco.Node, 0, 3)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				dst, _ = p.LocateN(dst[:0], keys[i&(len(keys)-1)], 3)
			}
		})
		b.Run("AddRemove/"+name, func(b *testing.B) {
			m, ok := benchBuild(b, a, nodes).(kolco.Mutable)
			if !ok {
				b.Skip("not a kolco.Mutable")
			}
			extra := kolco.Node{ID: "extra"}
			b.ReportAllocs()
			for b.Loop() {
				if err := m.Add(extra); err != nil {
					b.Fatal(err)
				}
				if err := m.Remove(extra.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchBuild(b *testing.B, a Algorithm, nodes []kolco.Node) kolco.Placement {
	b.Helper()
	p, err := a.New(nodes)
	if err != nil {
		b.Fatal(err)
	}
	return p
}
