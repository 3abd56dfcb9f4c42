package anchor_test

import (
	"fmt"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/anchor"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/kolcotest"
)

func algorithm() kolcotest.Algorithm {
	return kolcotest.Algorithm{
		Name: "anchor",
		// Room for the suite's churn, which grows a set of 12 up to 30.
		New: func(nodes []kolco.Node) (kolco.Placement, error) {
			return anchor.New(nodes, anchor.Config{Capacity: max(2*len(nodes), 64)})
		},
		// The capacity comes with the state.
		Restore: func(nodes []kolco.Node, state []byte) (kolco.Placement, error) {
			return anchor.Restore(nodes, anchor.Config{}, state)
		},
		// Placement depends on the history of removals and additions.
		OrderIndependent: false,
		MinimalAdd:       true,
		MinimalRemove:    true,
		Undo:             true,
		Weighted:         false, // rejects weights other than 1
		// Each key is uniform over the working buckets: balance is that of
		// a uniform random assignment, left to the sampling allowance.
		Balance: func(int) float64 { return 1 },
		NewHashed: func(nodes []kolco.Node, h keyhash.Func) (kolco.Placement, error) {
			return anchor.New(nodes, anchor.Config{Hash: h})
		},
		// Every node's share is 1/N: the loads differ from the mean by
		// sampling noise alone, 0.7% for 18,000 keys a node (see doc.go).
		MaxOverMean: 1.10,
		MinOverMean: 0.90,
	}
}

func TestSuite(t *testing.T) { kolcotest.Run(t, algorithm()) }

func FuzzOps(f *testing.F) {
	kolcotest.FuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { kolcotest.Ops(t, algorithm(), data) })
}

// FuzzCapacity runs the shared script against a small fixed capacity, so
// that adds beyond it (ErrCapacity) are frequent.
func FuzzCapacity(f *testing.F) {
	kolcotest.FuzzSeeds(f)
	f.Add([]byte{5, 1, 16, 2, 16, 3, 16, 5, 4, 16, 5, 16, 6, 16, 0, 7, 16})
	f.Fuzz(func(t *testing.T, data []byte) {
		kolcotest.Ops(t, kolcotest.Algorithm{
			Name: "anchor/capacity=3",
			New: func(nodes []kolco.Node) (kolco.Placement, error) {
				return anchor.New(nodes, anchor.Config{Capacity: 3})
			},
		}, data)
	})
}

func BenchmarkSuite(b *testing.B) {
	kolcotest.Benchmark(b, kolcotest.Algorithm{
		Name: "anchor",
		New: func(nodes []kolco.Node) (kolco.Placement, error) {
			return anchor.New(nodes, anchor.Config{})
		},
	})
}

// BenchmarkLocateAfterRemovals measures lookups when half the buckets of
// the default capacity were removed at random rather than never used.
func BenchmarkLocateAfterRemovals(b *testing.B) {
	keys := kolcotest.Keys(1 << 12)
	for _, n := range kolcotest.BenchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			nodes := kolcotest.Nodes(2 * n)
			h, err := anchor.New(nodes, anchor.Config{})
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < 2*n; i += 2 {
				if err := h.Remove(nodes[i].ID); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				_, _ = h.Locate(keys[i&(len(keys)-1)])
			}
		})
	}
}
