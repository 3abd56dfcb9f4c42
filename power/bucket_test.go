package power_test

import (
	"testing"

	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/power"
)

func TestBucket(t *testing.T) { kolcotest.RunBucket(t, power.Bucket) }

func FuzzBucket(f *testing.F) {
	kolcotest.BucketFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, key uint64, n int) { kolcotest.FuzzBucket(t, power.Bucket, key, n) })
}
