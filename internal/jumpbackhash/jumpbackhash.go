// Package jumpbackhash is the core of JumpBackHash (Otmar Ertl,
// "JumpBackHash: Say Goodbye to the Modulo Operation to Distribute Keys
// Uniformly to Buckets", Software: Practice and Experience, 2025;
// arXiv:2403.18682, 2024) that package jumpback and package
// jumpbackanchor share: the bucket of a key drawn from a SplitMix64
// generator seeded with the key hash, and the generator's later draws,
// which JumpBackAnchorHash goes on reading where the bucket left off.
//
// The generator is Steele, Lea and Flood's SplitMix64 ("Fast Splittable
// Pseudorandom Number Generators", OOPSLA 2014) as hash4j's
// PseudoRandomGeneratorProvider.splitMix64_V1() implements it, and the
// functions here draw from it exactly as hash4j's JumpBackHash and
// JumpBackAnchorHash do, so that their results equal hash4j's. The state
// is passed and returned by value, which keeps it in a register.
package jumpbackhash

import (
	"math/bits"

	"github.com/kolco-dev/kolco/internal/mix"
)

// Next returns the generator's next output from state s, and the state
// after it.
func Next(s uint64) (out, next uint64) {
	s += mix.Golden
	return mix.SplitMix64(s), s
}

// Bucket returns the bucket in [0, n) that JumpBackHash gives the key
// whose generator starts at s (the key hash), and the generator's state
// after the draws it made. n must be at least 2.
func Bucket(s uint64, n uint32) (uint32, uint64) {
	v, s := Next(s)
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
			return b, s
		}
		// Only the top interval can overshoot n: redraw uniformly in
		// [0, 2q) until the jump lands below n or falls out of [q, 2q),
		// which means the key's jump lies in a lower interval.
		for {
			var w uint64
			w, s = Next(s)
			b = uint32(w) & (2*q - 1)
			if b < q {
				break
			}
			if b < n {
				return b, s
			}
			b = uint32(w>>32) & (2*q - 1)
			if b < q {
				break
			}
			if b < n {
				return b, s
			}
		}
		u ^= q
	}
	return 0, s
}

// Uniform returns an integer uniform in [0, n) drawn from the generator at
// s, and the state after: the high word of the low 32 bits of a draw times
// n, with a draw rejected when its low word falls in the 2^32 mod n values
// that would favour some results (Lemire, "Fast Random Integer Generation
// in an Interval", ACM TOMACS, 2019), as hash4j's uniformInt draws. n must
// be at least 1.
func Uniform(s uint64, n uint32) (uint32, uint64) {
	var x uint64
	x, s = Next(s)
	m := uint64(uint32(x)) * uint64(n)
	if uint32(m) < n {
		t := uint32(-n) % n // 2^32 mod n
		for uint32(m) < t {
			x, s = Next(s)
			m = uint64(uint32(x)) * uint64(n)
		}
	}
	return uint32(m >> 32), s
}
