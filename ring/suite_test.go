package ring_test

import (
	"math"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/ring"
)

func TestSharedSuite(t *testing.T) {
	const v = ring.DefaultVNodes
	kolcotest.Run(t, kolcotest.Algorithm{
		Name:             "ring",
		New:              func(nodes []kolco.Node) (kolco.Placement, error) { return ring.New(nodes, ring.Config{}) },
		OrderIndependent: true,
		MinimalAdd:       true,
		MinimalRemove:    true,
		Weighted:         true,
		WeightTolerance:  0.15, // 160 points per unit: the share's relative stdev is about 1/sqrt(160)
		// The share of a node is a sum of V arcs: relative stdev about
		// sqrt((N-1)/(N*V+1)); the largest of N such shares stays within
		// four of those of the mean.
		Balance: func(n int) float64 { return 1 + 4*math.Sqrt(float64(n-1)/float64(n*v+1)) },
	})
}
