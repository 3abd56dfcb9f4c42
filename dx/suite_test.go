package dx_test

import (
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/dx"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/kolcotest"
)

func algorithm() kolcotest.Algorithm {
	return kolcotest.Algorithm{
		Name: "dx",
		// Room for the suite's churn, which grows a set of 12 up to 30: at
		// least 64 slots, else the default (twice the nodes, rounded up).
		New: func(nodes []kolco.Node) (kolco.Placement, error) {
			cfg := dx.Config{}
			if len(nodes) < 32 {
				cfg.Capacity = 64
			}
			return dx.New(nodes, cfg)
		},
		// The capacity comes with the state.
		Restore: func(nodes []kolco.Node, state []byte) (kolco.Placement, error) {
			return dx.Restore(nodes, dx.Config{}, state)
		},
		MinimalAdd:    true,
		MinimalRemove: true,
		Undo:          true,
		FairShare:     true,
		Weighted:      true,
		// Each key is uniform over the working slots: balance is that of a
		// uniform random assignment, left to the sampling allowance.
		Balance: func(int) float64 { return 1 },
		NewHashed: func(nodes []kolco.Node, h keyhash.Func) (kolco.Placement, error) {
			return dx.New(nodes, dx.Config{Hash: h})
		},
		// Every node's share is 1/N: the loads differ from the mean by
		// sampling noise alone, 0.7% for 18,000 keys a node (see doc.go).
		MaxOverMean: 1.10,
		MinOverMean: 0.90,
		Errors:      []error{dx.ErrCapacity},
	}
}

func TestSuite(t *testing.T) { kolcotest.Run(t, algorithm()) }

func FuzzOps(f *testing.F) {
	kolcotest.FuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { kolcotest.Ops(t, algorithm(), data) })
}

func BenchmarkSuite(b *testing.B) {
	kolcotest.Benchmark(b, kolcotest.Algorithm{
		Name: "dx",
		New: func(nodes []kolco.Node) (kolco.Placement, error) {
			return dx.New(nodes, dx.Config{})
		},
	})
}
