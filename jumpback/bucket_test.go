package jumpback_test

import (
	"math"
	"testing"

	"github.com/kolco-dev/kolco/jump"
	"github.com/kolco-dev/kolco/jumpback"
)

// TestBucketConsistent checks the defining property of a consistent bucket
// function on many keys: growing from n to n+1 buckets moves a key only to
// bucket n. Sizes cross several powers of two, where JumpBackHash changes
// its top interval.
func TestBucketConsistent(t *testing.T) {
	for k := range uint64(3000) {
		key := k * 0x9e3779b97f4a7c15
		prev := jumpback.Bucket(key, 1)
		if prev != 0 {
			t.Fatalf("Bucket(%d, 1) = %d", key, prev)
		}
		for n := 2; n <= 600; n++ {
			b := jumpback.Bucket(key, n)
			if b != prev && b != n-1 {
				t.Fatalf("Bucket(%d, %d) = %d, was %d for %d buckets", key, n, b, prev, n-1)
			}
			prev = b
		}
	}
}

// TestBucketUniform checks that keys spread evenly for bucket counts just
// above, at and below powers of two, with a chi-square statistic against
// a bound far in its tail (the inputs are fixed, so the test is exact).
func TestBucketUniform(t *testing.T) {
	for _, n := range []int{2, 3, 7, 8, 9, 100, 127, 128, 129, 1000} {
		const perBucket = 400
		count := make([]int, n)
		for k := range uint64(n * perBucket) {
			count[jumpback.Bucket(k*0x9e3779b97f4a7c15+12345, n)]++
		}
		chi := 0.0
		for _, c := range count {
			d := float64(c - perBucket)
			chi += d * d / perBucket
		}
		// Mean n-1, standard deviation sqrt(2(n-1)); allow 6 deviations.
		bound := float64(n-1) + 6*math.Sqrt(2*float64(n-1))
		if chi > bound {
			t.Errorf("%d buckets: chi-square %.1f above %.1f", n, chi, bound)
		}
	}
}

// TestBucketMovesFairShare checks that growing to n+1 buckets moves about
// 1/(n+1) of the keys, as jump hash does.
func TestBucketMovesFairShare(t *testing.T) {
	for _, n := range []int{10, 63, 64, 1000} {
		moved := 0
		const keys = 50000
		for k := range uint64(keys) {
			key := k * 0x9e3779b97f4a7c15
			if jumpback.Bucket(key, n) != jumpback.Bucket(key, n+1) {
				moved++
			}
		}
		share, want := float64(moved)/keys, 1/float64(n+1)
		if math.Abs(share-want) > 4*math.Sqrt(want/keys)+0.001 {
			t.Errorf("%d -> %d buckets moves %.4f, want %.4f", n, n+1, share, want)
		}
	}
}

func TestBucketBadBuckets(t *testing.T) {
	for _, n := range []int{0, -1, -1 << 62} {
		if got := jumpback.Bucket(42, n); got != -1 {
			t.Errorf("Bucket(42, %d) = %d, want -1", n, got)
		}
	}
	if got := jumpback.Bucket(42, 1<<40); got < 0 || got >= 1<<31-1 {
		t.Errorf("Bucket(42, 2^40) = %d", got)
	}
}

func FuzzBucket(f *testing.F) {
	f.Add(uint64(0), 1)
	f.Add(uint64(1), 0)
	f.Add(^uint64(0), 1<<31)
	f.Add(uint64(42), -5)
	f.Fuzz(func(t *testing.T, key uint64, n int) {
		got := jumpback.Bucket(key, n)
		if n < 1 && got != -1 || n >= 1 && (got < 0 || got >= min(n, 1<<31-1)) {
			t.Fatalf("Bucket(%d, %d) = %d", key, n, got)
		}
	})
}

var sinkBucket int

// BenchmarkBucket compares JumpBackHash with jump hash in one run.
func BenchmarkBucket(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000, 1 << 20} {
		for _, f := range []struct {
			name string
			hash func(uint64, int) int
		}{{"jump", jump.Bucket}, {"jumpback", jumpback.Bucket}} {
			b.Run(f.name+"/buckets="+itoa(n), func(b *testing.B) {
				b.ReportAllocs()
				for i := uint64(0); b.Loop(); i++ {
					sinkBucket = f.hash(i*0x9e3779b97f4a7c15, n)
				}
			})
		}
	}
}

func itoa(n int) string {
	s := ""
	for {
		s = string(rune('0'+n%10)) + s
		if n /= 10; n == 0 {
			return s
		}
	}
}
