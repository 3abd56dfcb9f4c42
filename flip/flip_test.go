package flip_test

import (
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/flip"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/kolcotest"
)

var algorithm = kolcotest.BucketAlgorithm{
	Name: "flip",
	New: func(nodes []kolco.Node, h keyhash.Func) (kolco.Placement, error) {
		return flip.New(nodes, flip.Config{Hash: h})
	},
	Restore: func(nodes []kolco.Node, state []byte) (kolco.Placement, error) {
		return flip.Restore(nodes, flip.Config{}, state)
	},
	Bucket: flip.Bucket,
	Pinned: 0xcbb11ec3dd6f276d,
}

// TestPlacement runs the property suite, the checks of the bucket
// function and the pinned placement.
//
// The placement is package memento's, whose changes are fuzzed through
// jump's and jumpback's FuzzOps; Bucket is fuzzed with the other bucket
// functions by memento's FuzzBucket, and Restore by algo's FuzzRestore.
func TestPlacement(t *testing.T) { kolcotest.RunBucketAlgorithm(t, algorithm) }

func BenchmarkFlip(b *testing.B) { algorithm.Benchmark(b) }
