package jump_test

import (
	"testing"

	"github.com/kolco-dev/kolco/jump"
	"github.com/kolco-dev/kolco/kolcotest"
)

// TestBucketGuava checks the golden values of Guava's HashingTest
// (testConsistentHash_linearCongruentialGeneratorCompatibility), which the
// Guava authors check against the paper's C++ code.
func TestBucketGuava(t *testing.T) {
	golden100 := []int{0, 55, 62, 8, 45, 59, 86, 97, 82, 59, 73, 37, 17, 56, 86, 21, 90, 37, 38, 83}
	for key, want := range golden100 {
		if got := jump.Bucket(uint64(key), 100); got != want {
			t.Errorf("Bucket(%d, 100) = %d, want %d", key, got, want)
		}
	}
	for _, c := range []struct {
		key     uint64
		buckets int
		want    int
	}{
		{10863919174838991, 11, 6},
		{2016238256797177309, 11, 3},
		{1673758223894951030, 11, 5},
		{2, 100001, 80343},
		{2201, 100001, 22152},
		{2202, 100001, 15018},
	} {
		if got := jump.Bucket(c.key, c.buckets); got != c.want {
			t.Errorf("Bucket(%d, %d) = %d, want %d", c.key, c.buckets, got, c.want)
		}
	}
}

// TestBucketReference checks values generated from the paper's reference C++
// code, as published in the tests of github.com/dgryski/go-jump: bucket of
// key for 1, 2, 3, ... buckets.
func TestBucketReference(t *testing.T) {
	for _, c := range []struct {
		key  uint64
		want []int
	}{
		{0, []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
		{1, []int{0, 0, 0, 0, 0, 0, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 17, 17}},
		{0xdeadbeef, []int{0, 1, 2, 3, 3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 16, 16, 16}},
		{0x0ddc0ffeebadf00d, []int{0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 15, 15, 15, 15}},
	} {
		for i, want := range c.want {
			if got := jump.Bucket(c.key, i+1); got != want {
				t.Errorf("Bucket(%#x, %d) = %d, want %d", c.key, i+1, got, want)
			}
		}
	}
}

// TestBucket checks the promises of a consistent range hash (range,
// monotone growth, uniformity, the moved share): see kolcotest.RunBucket.
func TestBucket(t *testing.T) { kolcotest.RunBucket(t, jump.Bucket) }

func FuzzBucket(f *testing.F) {
	f.Add(uint64(0), 1)
	f.Add(uint64(1), 0)
	f.Add(^uint64(0), 1<<31)
	f.Add(uint64(42), -5)
	f.Fuzz(func(t *testing.T, key uint64, n int) {
		n %= 1 << 40 // keep the loop short: O(ln n) steps
		got := jump.Bucket(key, n)
		if n < 1 && got != -1 || n >= 1 && (got < 0 || got >= n) {
			t.Fatalf("Bucket(%d, %d) = %d", key, n, got)
		}
	})
}
