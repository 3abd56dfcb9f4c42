package keys

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/kolco-dev/kolco/sim/internal/parallel"
)

// hashCache holds the hashes of every key under one hash function,
// recognised by the hashes of a few probe keys, and their sorted order.
type hashCache struct {
	probe  []uint64
	hashes []uint64
	sorted []uint64 // hashes sorted ascending
	pos    []int32  // pos[i] is the key whose hash is sorted[i]
}

// hashesFor returns the hash of every key under hash, computed on all
// cores, reusing the last result when hash gives the same probe values.
func (k *Set) hashesFor(hash func(string) uint64) []uint64 {
	probe := make([]uint64, 0, 4)
	for _, s := range []string{"", "kolco", "key:0", "\x00\xff"} {
		probe = append(probe, hash(s))
	}
	if slices.Equal(probe, k.cache.probe) {
		return k.cache.hashes
	}
	out := make([]uint64, k.n)
	parallel.For(k.n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = hash(k.Key(i))
		}
	})
	k.cache = hashCache{probe: probe, hashes: out}
	return out
}

// sortedFor returns the hashes under hash sorted ascending, with the key
// index of each.
func (k *Set) sortedFor(hash func(string) uint64) ([]uint64, []int32) {
	hashes := k.hashesFor(hash)
	if k.cache.sorted != nil {
		return k.cache.sorted, k.cache.pos
	}
	pairs := bucketSort(hashes)
	sorted, pos := make([]uint64, len(pairs)), make([]int32, len(pairs))
	for i, x := range pairs {
		sorted[i], pos[i] = x.h, x.p
	}
	k.cache.sorted, k.cache.pos = sorted, pos
	return sorted, pos
}

// hp is a hash and the index of its key.
type hp struct {
	h uint64
	p int32
}

func cmpHP(a, b hp) int { return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.p, b.p)) }

// bucketSort returns (hash, index) pairs sorted by hash, then index. Hashes
// are close to uniform, so one counting pass on their top bits leaves
// buckets of about 16 pairs, each sorted on its own, on all cores: O(n)
// instead of O(n log n). Skewed hashes (a 32-bit hash in 64 bits) only make
// the buckets larger; the order is exact either way.
func bucketSort(hashes []uint64) []hp {
	top := uint64(0)
	for _, h := range hashes {
		top |= h
	}
	b := min(max(bits.Len(uint(len(hashes)))-4, 1), 22)
	shift := max(bits.Len64(top)-b, 0)
	start := make([]int, 1<<b+1)
	for _, h := range hashes {
		start[h>>shift+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	pairs := make([]hp, len(hashes))
	next := slices.Clone(start[:len(start)-1])
	for i, h := range hashes {
		j := h >> shift
		pairs[next[j]] = hp{h, int32(i)}
		next[j]++
	}
	buckets := len(start) - 1
	parallel.For(buckets, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			if run := pairs[start[j]:start[j+1]]; len(run) > 1 {
				slices.SortFunc(run, cmpHP)
			}
		}
	})
	return pairs
}
