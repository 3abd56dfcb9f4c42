package binomial_test

import (
	"testing"

	"github.com/kolco-dev/kolco/binomial"
	"github.com/kolco-dev/kolco/kolcotest"
)

func TestBucket(t *testing.T) { kolcotest.RunBucket(t, binomial.Bucket) }

func FuzzBucket(f *testing.F) {
	kolcotest.BucketFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, key uint64, n int) { kolcotest.FuzzBucket(t, binomial.Bucket, key, n) })
}
