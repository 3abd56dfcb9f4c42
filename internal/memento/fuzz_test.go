package memento_test

import (
	"testing"

	"github.com/kolco-dev/kolco/binomial"
	"github.com/kolco-dev/kolco/flip"
	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/power"
)

// FuzzBucket checks the range of the bucket functions that MementoHash
// runs on (jump's and jumpback's have targets of their own): a bucket in
// range for any key and any positive count, -1 for the rest. A bucket out
// of range would index past the bucket array of every lookup.
func FuzzBucket(f *testing.F) {
	kolcotest.BucketFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, key uint64, n int) {
		kolcotest.FuzzBucket(t, "flip", flip.Bucket, key, n)
		kolcotest.FuzzBucket(t, "binomial", binomial.Bucket, key, n)
		kolcotest.FuzzBucket(t, "power", power.Bucket, key, n)
	})
}
