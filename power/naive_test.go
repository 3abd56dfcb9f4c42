package power_test

import (
	"math"
	"testing"

	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/power"
)

// No implementation by the paper's author is published, so Bucket is
// checked against this second one, written from the paper's pseudocode as
// directly as it goes (Leu, arXiv:2307.12448: the main lookup, f and g):
// powers of two found by loops, the flip by a modulo, the jumps with
// math.Floor, and the two auxiliary hashes restated from the package's
// documentation.

func splitMix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// naiveF is f(k, m-1): the key's low bits below m, their highest power of
// two h, and h plus a hash of the key and h modulo h.
func naiveF(k uint64, m int) int {
	bits := int(k % uint64(m))
	if bits == 0 {
		return 0
	}
	h := 1
	for 2*h <= bits {
		h *= 2
	}
	return h + int(splitMix64(k^0x243f6a8885a308d3^uint64(h)*0x9e3779b97f4a7c15)%uint64(h))
}

// naiveG is g(k, n, s): jumps floor((x+1)/u) from s while below n.
func naiveG(k uint64, n, s int) int {
	state := k ^ 0x13198a2e03707344
	x := s
	for {
		state += 0x9e3779b97f4a7c15
		u := (float64(splitMix64(state)>>11) + 1) / math.Exp2(53)
		j := math.Floor(float64(x+1) / u)
		if j >= float64(n) {
			return x
		}
		x = int(j)
	}
}

func naive(k uint64, n int) int {
	m := 1
	for m < n {
		m *= 2
	}
	if r1 := naiveF(k, m); r1 < n {
		return r1
	}
	if r2 := naiveG(k, n, m/2-1); r2 > m/2-1 {
		return r2
	}
	return naiveF(k, m/2)
}

// TestBucketNaive compares Bucket with the naive implementation on the
// million pairs of kolcotest.BucketCases (100,000 with -short), each key
// with its own bucket count.
func TestBucketNaive(t *testing.T) {
	count := 1_000_000
	if testing.Short() {
		count = 100_000
	}
	kolcotest.BucketCases(count, func(key uint64, n int) {
		if got, want := power.Bucket(key, n), naive(key, n); got != want {
			t.Fatalf("Bucket(%#x, %d) = %d, the naive implementation gives %d", key, n, got, want)
		}
	})
}
