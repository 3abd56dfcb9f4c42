package power_test

import (
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/power"
)

var algorithm = kolcotest.BucketAlgorithm{
	Name: "power",
	New: func(nodes []kolco.Node, h keyhash.Func) (kolco.Placement, error) {
		return power.New(nodes, power.Config{Hash: h})
	},
	Restore: func(nodes []kolco.Node, state []byte) (kolco.Placement, error) {
		return power.Restore(nodes, power.Config{}, state)
	},
	Bucket: power.Bucket,
	Pinned: 0xef9f5d10d4db1802,
}

// TestPlacement runs the property suite, the checks of the bucket
// function and the pinned placement.
//
// The placement is package memento's, whose changes are fuzzed through
// jump's and jumpback's FuzzOps; Bucket is fuzzed with the other bucket
// functions by memento's FuzzBucket, and Restore by algo's FuzzRestore.
func TestPlacement(t *testing.T) { kolcotest.RunBucketAlgorithm(t, algorithm) }

func BenchmarkPower(b *testing.B) { algorithm.Benchmark(b) }
