package jumpback

import (
	"math/bits"

	"github.com/kolco-dev/kolco/internal/mix"
)

// splitMix64 is Steele, Lea and Flood's SplitMix64 generator ("Fast
// Splittable Pseudorandom Number Generators", OOPSLA 2014), the standard
// generator JumpBackHash is specified with.
type splitMix64 uint64

func (s *splitMix64) next() uint64 {
	*s += mix.Golden
	return mix.SplitMix64(uint64(*s))
}

// Bucket returns the bucket in [0, buckets) of a key by JumpBackHash: growing
// buckets from n to n+1 moves a key only to bucket n, each with probability
// 1/(n+1), like jump hash, but with integer arithmetic and O(1) expected
// time. Bucket returns -1 when buckets < 1, and buckets above 2^31-1 are
// treated as 2^31-1 (the algorithm works on 32-bit bucket numbers).
func Bucket(key uint64, buckets int) int {
	if buckets < 1 {
		return -1
	}
	n := uint32(min(buckets, 1<<31-1))
	if n == 1 {
		return 0
	}
	rng := splitMix64(key)
	v := rng.next()
	// Bit m of u says whether the key's last jump below 2^(m+1) lands in
	// [2^m, 2^(m+1)); only bits up to the top bit of n-1 matter. Going
	// down from the highest candidate interval, the first accepted jump
	// is the key's bucket.
	u := uint32(v^v>>32) & (^uint32(0) >> bits.LeadingZeros32(n-1))
	for u != 0 {
		q := uint32(1) << (31 - bits.LeadingZeros32(u))
		// The position inside [q, 2q) comes from the upper or lower half
		// of v, alternating with the number of intervals left.
		b := q + uint32(v>>(32*(bits.OnesCount32(u)&1)))&(q-1)
		if b < n {
			return int(b)
		}
		// Only the top interval can overshoot n: redraw uniformly in
		// [0, 2q) until the jump lands below n or falls out of [q, 2q),
		// which means the key's jump lies in a lower interval.
		for {
			w := rng.next()
			b = uint32(w) & (2*q - 1)
			if b < q {
				break
			}
			if b < n {
				return int(b)
			}
			b = uint32(w>>32) & (2*q - 1)
			if b < q {
				break
			}
			if b < n {
				return int(b)
			}
		}
		u ^= q
	}
	return 0
}
