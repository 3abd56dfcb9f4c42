package jump

// Bucket returns the bucket in [0, buckets) of a key by jump consistent hash,
// exactly as the reference code of Lamping and Veach (and Guava's
// Hashing.consistentHash) computes it. Growing buckets from n to n+1 moves a
// key only to bucket n, and each key moves with probability 1/(n+1).
// Bucket returns -1 when buckets < 1.
func Bucket(key uint64, buckets int) int {
	if buckets < 1 {
		return -1
	}
	// b is the last bucket the key jumped to, j the next candidate. The
	// linear congruential step is the paper's; the float division draws
	// the next jump so that the loop runs O(ln buckets) times.
	b, j := int64(-1), int64(0)
	for j < int64(buckets) {
		b = j
		key = key*2862933555777941757 + 1
		j = int64(float64(b+1) * (float64(int64(1)<<31) / float64((key>>33)+1)))
	}
	return int(b)
}
