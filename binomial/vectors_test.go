package binomial_test

import (
	"testing"

	"github.com/kolco-dev/kolco/binomial"
	"github.com/kolco-dev/kolco/kolcotest"
)

// TestBucketAuthors checks values printed by BinomialEngine.getBucket of
// the authors' Java implementation (github.com/SUPSI-DTI-ISIN/
// java-consistent-hashing-algorithms, commit 68803f8 of May 2025), run under
// Java 17 with a key hash that returns the key as it is, for the keys and
// bucket counts below.
func TestBucketAuthors(t *testing.T) {
	buckets := []int{1, 2, 3, 7, 8, 9, 10, 11, 100, 1000, 65536, 100001, 0x40000001}
	for _, c := range []struct {
		key  uint64
		want []int
	}{
		{0x0000000000000000, []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
		{0x0000000000000001, []int{0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
		{0x000000000000002a, []int{0, 0, 2, 3, 3, 3, 3, 3, 59, 59, 59, 59, 59}},
		{0x00000000deadbeef, []int{0, 1, 2, 2, 7, 7, 7, 10, 98, 937, 60807, 80018, 456716326}},
		{0x0ddc0ffeebadf00d, []int{0, 1, 1, 6, 7, 7, 7, 7, 14, 14, 50772, 76327, 964057012}},
		{0xffffffffffffffff, []int{0, 1, 1, 4, 4, 4, 4, 10, 37, 972, 58624, 78701, 577701268}},
		{0x9e3779b97f4a7c15, []int{0, 1, 1, 4, 4, 4, 4, 4, 20, 20, 27910, 27910, 799246757}},
		{0x112210f47de98115, []int{0, 1, 1, 4, 4, 4, 4, 4, 28, 359, 33684, 65724, 1016457549}},
	} {
		for i, n := range buckets {
			if got := binomial.Bucket(c.key, n); got != c.want[i] {
				t.Errorf("Bucket(%#x, %d) = %d, the authors' code gives %d", c.key, n, got, c.want[i])
			}
		}
	}
}

// TestBucketAuthorsDigest compares a million more values with the authors'
// code: kolcotest.BucketDigest over a million pairs is 0xee417f30ca5ec0b5
// with getBucket of a BinomialEngine of n buckets in place of Bucket.
func TestBucketAuthorsDigest(t *testing.T) {
	if h := kolcotest.BucketDigest(binomial.Bucket, 1_000_000); h != 0xee417f30ca5ec0b5 {
		t.Errorf("digest %#x, the authors' code gives 0xee417f30ca5ec0b5", h)
	}
}
