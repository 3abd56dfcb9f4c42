package kolcotest

import (
	"errors"
	"math"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
)

// BucketFunc is a consistent range hash: it maps a 64-bit key hash to a
// bucket in [0, buckets), and growing buckets from n to n+1 moves a key
// only to bucket n. It returns -1 when buckets < 1. Jump hash and its
// successors are such functions; package memento turns one into a
// placement with arbitrary removals.
type BucketFunc func(key uint64, buckets int) int

// RunBucket checks the promises of a consistent range hash as subtests of
// t, on fixed keys (every run is the same):
//
//   - Range: -1 for fewer than one bucket, else a bucket in range, up to
//     2^31-1 buckets.
//   - Monotone: growing from n to n+1 buckets moves a key only to bucket
//     n, for every n up to 600 (crossing several powers of two, where
//     most such functions change their top range).
//   - Uniform: a chi-square statistic of the bucket counts stays below a
//     bound six standard deviations into its tail, for counts just above,
//     at and below powers of two.
//   - MovedShare: growing to n+1 buckets moves 1/(n+1) of the keys,
//     within four standard deviations.
func RunBucket(t *testing.T, bucket BucketFunc) {
	t.Run("Range", func(t *testing.T) { testBucketRange(t, bucket) })
	t.Run("Monotone", func(t *testing.T) { testBucketMonotone(t, bucket) })
	t.Run("Uniform", func(t *testing.T) { testBucketUniform(t, bucket) })
	t.Run("MovedShare", func(t *testing.T) { testBucketMoved(t, bucket) })
}

// bucketKey returns the i-th key hash of the checks: spread over all 64
// bits, as a good key hash's values are.
func bucketKey(i uint64) uint64 { return i*0x9e3779b97f4a7c15 + 12345 }

func testBucketRange(t *testing.T, bucket BucketFunc) {
	for _, n := range []int{0, -1, -1 << 62} {
		if got := bucket(42, n); got != -1 {
			t.Errorf("Bucket(42, %d) = %d, want -1", n, got)
		}
	}
	for _, n := range []int{1, 2, 3, 1 << 20, 1<<31 - 1} {
		for i := range uint64(200) {
			if got := bucket(bucketKey(i), n); got < 0 || got >= n {
				t.Fatalf("Bucket(%#x, %d) = %d", bucketKey(i), n, got)
			}
		}
	}
}

func testBucketMonotone(t *testing.T, bucket BucketFunc) {
	keys := uint64(scaled(3000))
	for i := range keys {
		key := bucketKey(i)
		prev := bucket(key, 1)
		if prev != 0 {
			t.Fatalf("Bucket(%#x, 1) = %d", key, prev)
		}
		for n := 2; n <= 600; n++ {
			b := bucket(key, n)
			if b != prev && b != n-1 {
				t.Fatalf("Bucket(%#x, %d) = %d, was %d for %d buckets", key, n, b, prev, n-1)
			}
			prev = b
		}
	}
}

func testBucketUniform(t *testing.T, bucket BucketFunc) {
	for _, n := range []int{2, 3, 7, 8, 9, 11, 100, 127, 128, 129, 1000} {
		const perBucket = 400
		count := make([]int, n)
		for i := range uint64(n * perBucket) {
			count[bucket(bucketKey(i), n)]++
		}
		chi := 0.0
		for _, c := range count {
			d := float64(c - perBucket)
			chi += d * d / perBucket
		}
		// Mean n-1, standard deviation sqrt(2(n-1)).
		bound := float64(n-1) + 6*math.Sqrt(2*float64(n-1))
		if chi > bound {
			t.Errorf("%d buckets: chi-square %.1f above %.1f", n, chi, bound)
		}
	}
}

func testBucketMoved(t *testing.T, bucket BucketFunc) {
	for _, n := range []int{10, 63, 64, 1000} {
		moved := 0
		const keys = 50000
		for i := range uint64(keys) {
			if bucket(bucketKey(i), n) != bucket(bucketKey(i), n+1) {
				moved++
			}
		}
		share, want := float64(moved)/keys, 1/float64(n+1)
		t.Logf("%d -> %d buckets moves %.4f (1/%d = %.4f)", n, n+1, share, n+1, want)
		if math.Abs(share-want) > 4*math.Sqrt(want/keys)+0.001 {
			t.Errorf("%d -> %d buckets moves %.4f, want %.4f", n, n+1, share, want)
		}
	}
}

// FuzzBucket checks the range of the bucket function of package name on
// any key and count (counts above 2^31-1 read as 2^31-1); a fuzz target
// calls it with the fuzzer's values.
func FuzzBucket(t *testing.T, name string, bucket BucketFunc, key uint64, n int) {
	got := bucket(key, n)
	if n < 1 && got != -1 || n >= 1 && (got < 0 || got >= min(n, 1<<31-1)) {
		t.Fatalf("%s.Bucket(%#x, %d) = %d", name, key, n, got)
	}
}

// BucketFuzzSeeds adds the seed corpus of a FuzzBucket target: the edges
// of the key and of the count.
func BucketFuzzSeeds(f *testing.F) {
	f.Add(uint64(0), 1)          // one bucket
	f.Add(uint64(1), 0)          // none: -1
	f.Add(^uint64(0), 1<<31)     // past the 32-bit counts
	f.Add(uint64(42), -5)        // negative
	f.Add(uint64(7), 1<<31-1)    // the largest count
	f.Add(uint64(1<<63), 1<<40)  // a huge count
	f.Add(uint64(12345), 65537)  // just above a power of two
	f.Add(^uint64(0)>>1, 1<<16)  // a power of two
	f.Add(uint64(0x9e37), 10001) // an odd size
}

// BucketAlgorithm describes a placement that runs a consistent range hash
// over its nodes, bucket i holding the i-th node in ID order until a
// removal, with arbitrary removals through MementoHash: jump and its
// successors.
type BucketAlgorithm struct {
	// Name is the algorithm's.
	Name string
	// New builds the placement with the key hash given (nil: the
	// default, keyhash.XXH3).
	New func(nodes []kolco.Node, hash keyhash.Func) (kolco.Placement, error)
	// Restore rebuilds a placement from its state, with the default hash.
	Restore func(nodes []kolco.Node, state []byte) (kolco.Placement, error)
	// Bucket is the algorithm's bucket function.
	Bucket BucketFunc
	// Pinned is the fingerprint ([Fingerprint] of 1000 keys) of 10 nodes
	// after removing node-2 and node-9 and adding node-x, recorded when
	// the package was written: it changes only if placement changes,
	// which breaks every deployed cluster.
	Pinned uint64
}

// RunBucketAlgorithm runs, as subtests of t, [Run] with the promises of
// such a placement (minimal disruption, fair shares, undo, even balance, within
// 1.10 and 0.90 of the mean under every key hash, no weights) and [RunBucket]
// on its bucket function, and checks that:
//
//   - Unweighted: a weight of 2 is refused with kolco.ErrBadWeight.
//   - NoRemovalIsBucket: without removals a key is on the node of bucket
//     Bucket(xxh3(key), N), the nodes in ID order.
//   - Pinned: the placement after a few changes has the pinned fingerprint.
func RunBucketAlgorithm(t *testing.T, b BucketAlgorithm) {
	t.Run("Properties", func(t *testing.T) { Run(t, b.algorithm()) })
	t.Run("Bucket", func(t *testing.T) { RunBucket(t, b.Bucket) })
	t.Run("Unweighted", func(t *testing.T) {
		if _, err := b.New([]kolco.Node{{ID: "a", Weight: 2}}, nil); !errors.Is(err, kolco.ErrBadWeight) {
			t.Fatalf("New with weight 2: %v", err)
		}
	})
	t.Run("NoRemovalIsBucket", func(t *testing.T) {
		p, err := b.New(Nodes(37), nil)
		if err != nil {
			t.Fatal(err)
		}
		sorted := p.Nodes()
		for _, k := range Keys(3000) {
			got, _ := p.Locate(k)
			if want := sorted[b.Bucket(keyhash.XXH3(k), len(sorted))]; got.ID != want.ID {
				t.Fatalf("Locate(%q) = %s, want %s", k, got.ID, want.ID)
			}
		}
	})
	t.Run("Pinned", func(t *testing.T) {
		p, err := b.New(Nodes(10), nil)
		if err != nil {
			t.Fatal(err)
		}
		m := p.(kolco.Mutable)
		if err := m.Remove("node-2", "node-9"); err != nil {
			t.Fatal(err)
		}
		if err := m.Add(kolco.Node{ID: "node-x"}); err != nil {
			t.Fatal(err)
		}
		if got, err := Fingerprint(p, 1000); err != nil || got != b.Pinned {
			t.Errorf("fingerprint %#x (%v), pinned %#x", got, err, b.Pinned)
		}
	})
}

// Benchmark runs [Benchmark] on the placement with the default hash.
func (b BucketAlgorithm) Benchmark(tb *testing.B) { Benchmark(tb, b.algorithm()) }

func (b BucketAlgorithm) algorithm() Algorithm {
	return Algorithm{
		Name:          b.Name,
		New:           func(nodes []kolco.Node) (kolco.Placement, error) { return b.New(nodes, nil) },
		Restore:       b.Restore,
		MinimalAdd:    true,
		MinimalRemove: true,
		FairShare:     true,
		Undo:          true,
		Balance:       func(int) float64 { return 1 },
		NewHashed:     b.New,
		// Every node's share is 1/N: the loads differ from the mean by
		// sampling noise alone, 0.7% for 18,000 keys a node.
		MaxOverMean: 1.10,
		MinOverMean: 0.90,
	}
}

// BucketCases calls f with count pairs of a key hash and a bucket count,
// the same every time, for comparing a bucket function with another
// implementation of it: the i-th key is i times 0x9e3779b97f4a7c15 xor
// i>>3, and the counts cycle through sizes up to 10, 1000, 100,000 and a
// billion: for i mod 4 = 0, 1, 2 and 3, i mod 10 + 1, i mod 1000 + 1,
// i mod 100000 + 1 and i*2654435761 mod 1000000007 + 1.
func BucketCases(count int, f func(key uint64, n int)) {
	for i := range uint64(count) {
		n := i*2654435761%1000000007 + 1
		switch i % 4 {
		case 0:
			n = i%10 + 1
		case 1:
			n = i%1000 + 1
		case 2:
			n = i%100000 + 1
		}
		f(i*0x9e3779b97f4a7c15^i>>3, int(n))
	}
}

// BucketDigest returns h = 31*h + bucket(key, n) over the pairs of
// [BucketCases], starting from 0: one number to compare with what another
// implementation prints for the same pairs.
func BucketDigest(bucket BucketFunc, count int) uint64 {
	var h uint64
	BucketCases(count, func(key uint64, n int) { h = h*31 + uint64(bucket(key, n)) })
	return h
}
