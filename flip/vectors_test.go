package flip_test

import (
	"testing"

	"github.com/kolco-dev/kolco/flip"
	"github.com/kolco-dev/kolco/kolcotest"
)

// TestBucketCrate checks values printed by fliphash_64(key, ..=end) of
// the authors' crate (github.com/DataDog/fliphash-rs, version 0.1.0, the
// implementation released with the paper), built with rustc 1.95, for the
// keys below and end = buckets-1.
func TestBucketCrate(t *testing.T) {
	ends := []int{0, 1, 2, 6, 7, 8, 9, 16, 17, 99, 999, 65535, 100000, 999999999}
	for _, c := range []struct {
		key  uint64
		want []int
	}{
		{0x0000000000000000, []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
		{0x0000000000000001, []int{0, 1, 1, 5, 5, 5, 9, 16, 16, 36, 636, 47489, 47489, 630560763}},
		{0x000000000000002a, []int{0, 0, 0, 4, 4, 4, 4, 15, 15, 83, 792, 23951, 67382, 92162111}},
		{0x00000000deadbeef, []int{0, 0, 0, 5, 5, 5, 5, 11, 11, 69, 792, 39585, 39585, 304208456}},
		{0x0ddc0ffeebadf00d, []int{0, 0, 0, 4, 4, 4, 4, 4, 17, 92, 445, 60318, 60318, 943801045}},
		{0xffffffffffffffff, []int{0, 1, 1, 5, 5, 5, 5, 5, 5, 42, 272, 57010, 83562, 980842172}},
		{0x9e3779b97f4a7c15, []int{0, 1, 2, 6, 6, 8, 8, 8, 8, 39, 318, 318, 318, 498204646}},
		{0x90b63fb3ae6afcc7, []int{0, 1, 1, 1, 1, 1, 1, 13, 13, 13, 452, 22535, 22535, 740320451}},
	} {
		for i, end := range ends {
			if got := flip.Bucket(c.key, end+1); got != c.want[i] {
				t.Errorf("Bucket(%#x, %d) = %d, the crate gives %d", c.key, end+1, got, c.want[i])
			}
		}
	}
}

// TestBucketCrateDigest compares a million more values with the crate's:
// kolcotest.BucketDigest over a million pairs is 0x759f8e6d603018b0 with
// fliphash_64(key, ..=n-1) in place of Bucket.
func TestBucketCrateDigest(t *testing.T) {
	if h := kolcotest.BucketDigest(flip.Bucket, 1_000_000); h != 0x759f8e6d603018b0 {
		t.Errorf("digest %#x, the crate's 0x759f8e6d603018b0", h)
	}
}
