package bounded_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/bounded"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/kolcotest"
)

// algorithm is the plain placement (Locate, LocateN) that the bounded walk
// starts from; the load bounds themselves are tested in this package.
func algorithm() kolcotest.Algorithm {
	return kolcotest.Algorithm{
		Name:             "bounded",
		New:              func(nodes []kolco.Node) (kolco.Placement, error) { return bounded.New(nodes, bounded.Config{}) },
		OrderIndependent: true,
		Undo:             true,
		MinimalAdd:       true,
		MinimalRemove:    true,
		Weighted:         true,
		// Shares follow point counts: 64 points per unit of weight leave a
		// relative spread of about 1/sqrt(64 w).
		WeightTolerance: 0.25,
		// The documented bound of a ring of 64 points per node.
		Balance: func(int) float64 { return 1 + 5/math.Sqrt(bounded.DefaultVNodes) },
		// The matrix measures the bounded walk (Assign) over a ring of 160
		// points per unit of weight: no node above its capacity, 1.25 times
		// the mean, and none below what the ring's spread allows (see
		// doc.go).
		NewHashed: func(nodes []kolco.Node, h keyhash.Func) (kolco.Placement, error) {
			return bounded.New(nodes, bounded.Config{Hash: h, VNodes: 160})
		},
		Owners: func(p kolco.Placement, keys []string) ([]int, error) {
			a, err := p.(*bounded.Ring).Assign(keys)
			return a.Owner, err
		},
		MaxOverMean: 1.35,
		MinOverMean: 0.65,
	}
}

func TestSuite(t *testing.T) { kolcotest.Run(t, algorithm()) }

func FuzzOps(f *testing.F) {
	kolcotest.FuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { kolcotest.Ops(t, algorithm(), data) })
}

func BenchmarkSuite(b *testing.B) { kolcotest.Benchmark(b, algorithm()) }

// BenchmarkAcquireRelease measures one live placement and its release with
// 1000 requests in flight, a third of them on one hot key.
func BenchmarkAcquireRelease(b *testing.B) {
	keys := kolcotest.Keys(1 << 12)
	for _, n := range kolcotest.BenchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			r, err := bounded.New(kolcotest.Nodes(n), bounded.Config{})
			if err != nil {
				b.Fatal(err)
			}
			held := make([]bounded.Lease, 1000)
			for i := range held {
				if held[i], err = r.Acquire(keys[i%3*i&(len(keys)-1)]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				key := keys[i&(len(keys)-1)]
				if i%3 == 0 {
					key = "hot"
				}
				held[i%1000].Release()
				held[i%1000], _ = r.Acquire(key)
			}
		})
	}
}

// BenchmarkAssign measures the static allocation of 10 keys per node.
func BenchmarkAssign(b *testing.B) {
	for _, n := range kolcotest.BenchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			r, err := bounded.New(kolcotest.Nodes(n), bounded.Config{})
			if err != nil {
				b.Fatal(err)
			}
			keys := kolcotest.Keys(10 * n)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Assign(keys); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
