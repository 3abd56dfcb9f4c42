package jumpback

import "github.com/kolco-dev/kolco/internal/jumpbackhash"

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
	b, _ := jumpbackhash.Bucket(key, n)
	return int(b)
}
