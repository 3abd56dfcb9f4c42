package binomial

import "math/bits"

// retries is the number of fresh draws in the enclosing tree before a key
// settles in the minor tree, as in the authors' implementation: each draw
// lands in the minor tree with probability 1/2 or more, so four leave a
// key in the top level's unused part at most 1/16 of the time.
const retries = 4

// rehash is the algorithm's generator: one step of jump hash's linear
// congruential generator, squared, times the seed, keeping the bits above
// the 32nd.
func rehash(v, seed uint64) uint64 {
	h := 2862933555777941757*v + 1
	return h * h * seed >> 32
}

// relocate moves bucket b, read from the low bits of h, to a position drawn
// from h within b's level of the binary tree of buckets: level 0 is bucket
// 0, level 1 bucket 1, and level l > 1 the buckets [2^(l-1), 2^l). A key's
// level never changes as the tree grows, so neither does its position.
func relocate(b, h uint64) uint64 {
	if b < 2 {
		return b
	}
	base := uint64(1) << (bits.Len64(b) - 1)
	return base + rehash(h, base-1)&(base-1)
}

// Bucket returns the bucket in [0, buckets) of a key by BinomialHash, with
// the output of the authors' Java implementation (BinomialEngine of the
// SUPSI consistent hashing library): growing buckets from n to n+1 moves a
// key only to bucket n, in constant time. Bucket returns -1 when
// buckets < 1, and buckets above 2^31-1 are treated as 2^31-1.
//
// The key's low bits pick its level in the smallest complete binary tree
// of buckets that holds them all (the enclosing tree). A key whose
// position falls past the last bucket draws again, up to four times, and
// takes the first draw that lands on a bucket of the top level; a draw in
// the levels below (the minor tree), or four misses, sends it to its
// position in the minor tree.
func Bucket(key uint64, buckets int) int {
	if buckets < 1 {
		return -1
	}
	n := uint64(min(buckets, 1<<31-1))
	if n < 2 {
		return 0
	}
	enclosing := uint64(1)<<bits.Len64(n-1) - 1
	minor := enclosing >> 1
	if b := relocate(key&enclosing, key); b < n {
		return int(b)
	}
	h := key
	for range retries {
		h = rehash(h, enclosing)
		b := relocate(h&enclosing, h)
		if b <= minor {
			break
		}
		if b < n {
			return int(b)
		}
	}
	return int(relocate(key&minor, key))
}
