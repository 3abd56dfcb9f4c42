package power

import (
	"math/bits"

	"github.com/kolco-dev/kolco/internal/mix"
)

// Seeds of the two auxiliary hashes, so that their values for one key are
// unrelated: the flip of the power-of-two range and the jumps above it.
const (
	flipSeed = 0x243f6a8885a308d3 // the first fractional digits of pi
	jumpSeed = 0x13198a2e03707344 // the next ones
)

// f maps a key to [0, mask] for a mask 2^r - 1: the key's low bits pick
// the range [h, 2h) of their highest set bit h, and the first auxiliary
// hash, of the key and h, its position in it. Growing the mask keeps a key
// where it was or moves it to the new top half.
func f(key, mask uint64) uint64 {
	b := key & mask
	if b == 0 {
		return 0
	}
	h := uint64(1) << (bits.Len64(b) - 1)
	return h + mix.SplitMix64(key^flipSeed^h*mix.Golden)&(h-1)
}

// g is the jump process of jump consistent hash from bucket s: the key
// jumps to floor((x+1)/u) for uniform draws u in (0, 1] of the second
// auxiliary hash (a SplitMix64 stream seeded with the key) while the jump
// stays below n, and g returns the last bucket reached. From s >= n/2-1 it
// takes O(1) expected steps.
func g(key uint64, n, s int) int {
	state := key ^ jumpSeed
	x := s
	for {
		state += mix.Golden
		u := float64(mix.SplitMix64(state)>>11+1) / (1 << 53)
		j := float64(x+1) / u
		if j >= float64(n) {
			return x
		}
		x = int(j)
	}
}

// Bucket returns the bucket in [0, buckets) of a key by power consistent
// hash: growing buckets from n to n+1 moves a key only to bucket n, each
// with probability 1/(n+1), in O(1) expected time. Bucket returns -1 when
// buckets < 1, and buckets above 2^31-1 are treated as 2^31-1.
//
// With m the smallest power of two at or above n, a key takes f's place in
// [0, m) when it is below n; else the jump process from m/2-1 decides
// whether it lands in [m/2, n) or stays below, where f's place in [0, m/2)
// is taken.
func Bucket(key uint64, buckets int) int {
	if buckets < 1 {
		return -1
	}
	n := min(buckets, 1<<31-1)
	mask := uint64(1)<<bits.Len64(uint64(n-1)) - 1 // m-1
	if r := f(key, mask); r < uint64(n) {
		return int(r)
	}
	half := int(mask >> 1) // m/2-1
	if r := g(key, n, half); r > half {
		return r
	}
	return int(f(key, mask>>1))
}
