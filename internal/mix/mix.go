// Package mix holds the 64-bit finalizers the algorithms use to turn a hash
// and a small number into a new, well-mixed hash: MurmurHash3's fmix64
// (Appleby, 2011) and the output function of SplitMix64 (Steele, Lea and
// Flood, "Fast Splittable Pseudorandom Number Generators", OOPSLA 2014).
// Both are bijections of 64-bit words with full avalanche, so nearby inputs
// give unrelated outputs.
//
// Placements are pinned by golden vectors, so these functions never change.
package mix

// Golden is 2^64 divided by the golden ratio, SplitMix64's increment: added
// to or multiplied into a value, it spreads small numbers over all 64 bits.
const Golden = 0x9e3779b97f4a7c15

// Fmix64 is the finalizer of MurmurHash3's 64-bit variants.
func Fmix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// SplitMix64 is the output function of the SplitMix64 generator, whose
// state advances by [Golden] before each call.
func SplitMix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
