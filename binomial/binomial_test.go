package binomial_test

import (
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/binomial"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/kolcotest"
)

var algorithm = kolcotest.BucketAlgorithm{
	Name: "binomial",
	New: func(nodes []kolco.Node, h keyhash.Func) (kolco.Placement, error) {
		return binomial.New(nodes, binomial.Config{Hash: h})
	},
	Restore: func(nodes []kolco.Node, state []byte) (kolco.Placement, error) {
		return binomial.Restore(nodes, binomial.Config{}, state)
	},
	Bucket: binomial.Bucket,
	Pinned: 0x1fc1ba2d2c845e58,
}

// TestPlacement runs the property suite, the checks of the bucket
// function and the pinned placement.
//
// The placement is package memento's, whose changes are fuzzed through
// jump's and jumpback's FuzzOps; Bucket is fuzzed with the other bucket
// functions by memento's FuzzBucket, and Restore by algo's FuzzRestore.
func TestPlacement(t *testing.T) { kolcotest.RunBucketAlgorithm(t, algorithm) }

func BenchmarkBinomial(b *testing.B) { algorithm.Benchmark(b) }
