package slots_test

import (
	"math"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/slots"
)

func algorithm() kolcotest.Algorithm {
	return kolcotest.Algorithm{
		Name: "slots",
		New:  func(nodes []kolco.Node) (kolco.Placement, error) { return slots.New(nodes, slots.Config{}) },
		Restore: func(nodes []kolco.Node, state []byte) (kolco.Placement, error) {
			return slots.Restore(nodes, slots.Config{}, state)
		},
		// The slot table is state: which slots a node owns depends on the
		// changes that built it.
		OrderIndependent: false,
		MinimalAdd:       true,
		MinimalRemove:    true,
		// No undo: the table keeps no memory of where slots came from. A
		// node added and removed again gives its slots back by the rule
		// of every removal, in ID order, which restores a fresh map but
		// after other changes sent 7-12% of keys elsewhere; a node removed
		// and added back takes each node's highest slots, 3-23% of keys
		// (see doc.go).
		Undo:         false,
		MaxMovedUndo: 0.30,
		Weighted:     true,
		// A node owns at most ceil(16384/n) slots of 16384/n on average.
		Balance: func(n int) float64 {
			avg := float64(slots.DefaultCount) / float64(n)
			return math.Ceil(avg) / avg
		},
		NewHashed: func(nodes []kolco.Node, h keyhash.Func) (kolco.Placement, error) {
			return slots.New(nodes, slots.Config{Hash: h})
		},
		// Slot counts differ by one at most; the loads by sampling noise,
		// 0.7% for 18,000 keys a node (see doc.go).
		MaxOverMean: 1.10,
		MinOverMean: 0.90,
	}
}

func TestSuite(t *testing.T) { kolcotest.Run(t, algorithm()) }

func FuzzOps(f *testing.F) {
	kolcotest.FuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { kolcotest.Ops(t, algorithm(), data) })
}

func BenchmarkSuite(b *testing.B) { kolcotest.Benchmark(b, algorithm()) }
