package ring_test

import (
	"math"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/ring"
)

func TestSharedSuite(t *testing.T) {
	const v = ring.DefaultVNodes
	kolcotest.Run(t, kolcotest.Algorithm{
		Name:             "ring",
		New:              func(nodes []kolco.Node) (kolco.Placement, error) { return ring.New(nodes, ring.Config{}) },
		OrderIndependent: true,
		Undo:             true,
		MinimalAdd:       true,
		MinimalRemove:    true,
		Weighted:         true,
		WeightTolerance:  0.15, // 160 points per unit: the share's relative stdev is about 1/sqrt(160)
		// The share of a node is a sum of V arcs: relative stdev about
		// sqrt((N-1)/(N*V+1)); the largest of N such shares stays within
		// four of those of the mean.
		Balance: func(n int) float64 { return 1 + 4*math.Sqrt(float64(n-1)/float64(n*v+1)) },
		NewHashed: func(nodes []kolco.Node, h keyhash.Func) (kolco.Placement, error) {
			return ring.New(nodes, ring.Config{Hash: h})
		},
		// 11 nodes of 160 points: a share's relative spread is
		// sqrt(10/1761) = 0.075, and 1 ± 0.35 is 4.6 of it (see doc.go).
		MaxOverMean: 1.35,
		MinOverMean: 0.65,
	})
}
