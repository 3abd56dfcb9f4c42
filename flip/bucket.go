package flip

import "math/bits"

// maxIterations bounds the draws in the top range, as the reference crate
// does: after 64 draws that all land above the range, which happens with
// probability below 2^-64, the key goes to the lower power-of-two range.
const maxIterations = 64

// hash is the crate's family of 64-bit hashes of a key, indexed by a bit
// length and an iteration number: two multiply-xorshift rounds (after
// Evensen's Moremur) with the indexes folded in as odd multipliers.
func hash(key uint64, bitLen int, iteration uint64) uint64 {
	k := key * (uint64(bitLen)*2 + 1)
	k = (k ^ k>>27) * 0x3c79ac492ba7b653
	k *= iteration*2 + 1
	k = (k ^ k>>33) * 0x1c69b3f74ac4ae35
	return k ^ k>>27
}

// pow2 is FlipHash over the power-of-two range [0, mask]: the masked key
// hash h keeps its highest set bit b, and the bits below it are flipped by
// a hash of the key indexed by b. Keys whose masked hash has its highest
// bit at b stay within [2^b, 2^(b+1)) as the range grows, and spread
// evenly over it.
func pow2(key, h, mask uint64) uint64 {
	m := h & mask
	if m == 0 {
		return 0
	}
	b := bits.Len64(m) - 1
	return m ^ hash(key, b, 0)&(uint64(1)<<b-1)
}

// Bucket returns the bucket in [0, buckets) of a key by FlipHash, with the
// output of the reference crate's fliphash_64(key, ..=buckets-1): growing
// buckets from n to n+1 moves a key only to bucket n, each with
// probability 1/(n+1), in constant time. Bucket returns -1 when
// buckets < 1, and buckets above 2^31-1 are treated as 2^31-1, the most a
// placement's bucket array holds.
func Bucket(key uint64, buckets int) int {
	if buckets < 1 {
		return -1
	}
	end := uint64(min(buckets, 1<<31-1)) - 1
	if end == 0 {
		return 0
	}
	// The range [0, end] lies in [0, mask], the smallest power-of-two
	// range holding it, and above its lower half [0, mask>>1].
	r := bits.Len64(end)
	mask := uint64(1)<<r - 1
	h := hash(key, 0, 0)
	if d := pow2(key, h, mask); d <= end {
		return int(d)
	}
	// The key's place in [0, mask] is past end: draw again in the top
	// half until a draw falls in [mask/2+1, end] (taken) or in the lower
	// half (the key then goes to its place in [0, mask>>1]).
	for i := uint64(1); i <= maxIterations; i++ {
		d := hash(key, r-1, i) & mask
		if d <= mask>>1 {
			break
		}
		if d <= end {
			return int(d)
		}
	}
	return int(pow2(key, h, mask>>1))
}
