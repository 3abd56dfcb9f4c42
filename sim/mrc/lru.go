package mrc

import (
	"math"
	"slices"
	"sort"
)

// lruMisses returns the misses of an LRU cache of each size over refs
// sampled at rate: a read misses when the bytes of the keys requested
// since its key's last request, its own included, exceed rate times the
// size (its reuse distance, SHARDS's scaled down), or when its key has
// not been requested since it was deleted. Every request brings its key
// to the top of the stack, a read that misses being filled.
//
// The bytes above a key are a sum over a Fenwick tree indexed by request
// position, each key weighing its size at the position of its latest
// request: O(log n) a request.
func lruMisses(refs []Ref, rate float64, sizes []float64) []float64 {
	tree := make(fenwick, len(refs)+1)
	last := make([]int32, len(refs)) // by dense key: position of the latest request, -1 none
	weight := make([]float64, len(refs))
	for i := range last {
		last[i] = -1
	}
	var dists []float64 // of the reads of a key on the stack
	cold := 0           // reads of a key not on the stack
	for i, r := range refs {
		prev := last[r.Key]
		if prev >= 0 {
			if r.Op == Get {
				dists = append(dists, tree.sum(i)-tree.sum(int(prev)+1)+r.Size)
			}
			tree.add(int(prev), -weight[r.Key])
		} else if r.Op == Get {
			cold++
		}
		if r.Op == Delete {
			last[r.Key] = -1
			continue
		}
		tree.add(i, r.Size)
		last[r.Key], weight[r.Key] = int32(i), r.Size
	}
	slices.Sort(dists)
	out := make([]float64, len(sizes))
	for j, c := range sizes {
		limit := c * rate * (1 + 1e-12) // a distance of exactly the size hits, whatever the sum's rounding
		hits := sort.SearchFloat64s(dists, math.Nextafter(limit, math.Inf(1)))
		out[j] = float64(cold + len(dists) - hits)
	}
	return out
}

// fenwick is a binary indexed tree of sums over positions 0..n-1.
type fenwick []float64

// add adds v at position i.
func (f fenwick) add(i int, v float64) {
	for i++; i < len(f); i += i & -i {
		f[i] += v
	}
}

// sum returns the sum of positions 0..i-1.
func (f fenwick) sum(i int) float64 {
	s := 0.0
	for ; i > 0; i -= i & -i {
		s += f[i]
	}
	return s
}
