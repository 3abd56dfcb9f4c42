package ring

import (
	"math"
	"math/bits"
)

// The search for the first point at or after a hash is the whole cost of a
// lookup besides hashing the key. A binary search over a million points is
// twenty dependent loads, most of them cache misses, and twenty branches
// the predictor cannot learn. Instead:
//
//   - A prefix index of about one slot per two points (2 bytes per point)
//     maps a hash to its slot, floor(h × slots / 2^64), and the slot to the
//     run of points in it: one load, usually from the same cache line as
//     the next slot's entry.
//   - The run is scanned by counting, without a branch, how many of the
//     scanWidth points from its start are below the hash. Because the points
//     are sorted, that count is the offset of the answer. Points past the end
//     of the run belong to later slots and are never below the hash, and the
//     array carries scanWidth sentinel points past its end, so the count is
//     exact whenever the run is at most scanWidth long: with two points per
//     slot on average, all but about one slot in four thousand.
//
// Measured on a 2-core AMD EPYC (Turin) VM, 100 nodes × 160 points: the
// search alone took 20 ns with a power-of-two prefix index of up to four
// points per slot scanned by a loop that exits on the first point >= h (one
// mispredicted branch per lookup), 9 ns with the branch-free count; a whole
// Locate, in CPU time, fastest of 7 interleaved rounds in one process, went
// from 41 ns to 23 ns (10 × 160: 36 to 19; 1000 × 100: 59 to 41).
//
// Tried and dropped: a sparser index for large rings, one slot per eight
// points with sixteen compared, so that the index of a million points
// (512 KiB) stays in the L2 cache. In CPU time on the same VM, at 2^20
// points, independent lookups (as in a benchmark loop, where the core
// overlaps the misses of several) took 73-76 ns against 59-73 ns with
// this index; lookups that each wait for the previous one took 246-268 ns
// against 317-383 ns. At 16,000 points independent lookups were 40%
// slower. Neither is near the cost of a small ring: a million points
// (14 MB) miss every cache and the TLB, so one code path was kept.

// scanWidth is the number of points the branch-free scan compares: two cache
// lines of points at most, and longer than nearly every run.
const scanWidth = 8

// sentinel pads the points array past its end: no hash is below it.
const sentinel = math.MaxUint64

// slot returns the index slot of h. It is monotone in h, so each slot holds a
// contiguous run of points, and unlike a shift it allows any slot count.
func (s *Snapshot) slot(h uint64) uint64 {
	hi, _ := bits.Mul64(h, s.slots)
	return hi
}

// search returns the index of the first point >= h, wrapping to 0. The
// ring must have points.
func (s *Snapshot) search(h uint64) int {
	j := s.slot(h)
	lo, hi := int(s.index[j]), int(s.index[j+1])
	if hi-lo > scanWidth {
		return s.searchLong(h, lo, hi)
	}
	// Within the capacity: buildIndex keeps scanWidth sentinels past the end.
	p := (*[scanWidth]uint64)(s.points[lo : lo+scanWidth])
	lo += count4((*[4]uint64)(p[:4]), h) + count4((*[4]uint64)(p[4:]), h)
	if lo == len(s.points) {
		return 0
	}
	return lo
}

// owner returns the owner of the first point >= h, as
// owners[search(h)], but starts loading the owner's cache line at the same
// time as the points': the answer is at most scanWidth entries from the
// start of the run, so its owner almost always shares a cache line with
// the run's first owner. On rings larger than the cache this overlaps two
// memory accesses that search-then-load would make one after the other.
func (s *Snapshot) owner(h uint64) uint32 {
	j := s.slot(h)
	lo, hi := int(s.index[j]), int(s.index[j+1])
	if hi-lo > scanWidth {
		return s.owners[s.searchLong(h, lo, hi)]
	}
	early := s.owners[min(lo, len(s.owners)-1)]
	p := (*[scanWidth]uint64)(s.points[lo : lo+scanWidth])
	lo += count4((*[4]uint64)(p[:4]), h) + count4((*[4]uint64)(p[4:]), h)
	if lo == len(s.points) {
		lo = 0
	}
	o := s.owners[lo]
	if early == droppedOwner { // never true; a load whose value is unused would be dropped
		return early
	}
	return o
}

// count4 returns how many of p are below h, without a branch: each term is
// the borrow of p[k] - h, which is 1 exactly when p[k] < h. A scan of
// scanWidth points is two calls, each small enough for the compiler to
// inline; one function over eight points (or a sum over a bool-to-int
// helper) was too large to inline, and the call with its register spills
// cost about a nanosecond.
func count4(p *[4]uint64, h uint64) int {
	_, b0 := bits.Sub64(p[0], h, 0)
	_, b1 := bits.Sub64(p[1], h, 0)
	_, b2 := bits.Sub64(p[2], h, 0)
	_, b3 := bits.Sub64(p[3], h, 0)
	return int(b0 + b1 + b2 + b3)
}

// searchLong is search for a run longer than scanWidth: a binary search.
func (s *Snapshot) searchLong(h uint64, lo, hi int) int {
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.points[m] < h {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(s.points) {
		return 0
	}
	return lo
}

// buildIndex pads the points with sentinels and fills the prefix index with
// one slot per two points, so that it costs 2 bytes per point.
func (s *Snapshot) buildIndex() {
	n := len(s.points)
	if cap(s.points) < n+scanWidth {
		s.points = append(make([]uint64, 0, n+scanWidth), s.points...)
	}
	pad := s.points[n : n+scanWidth]
	for i := range pad {
		pad[i] = sentinel
	}
	s.slots = uint64(max(n/2, 1))
	index, slots := make([]uint32, s.slots+1), s.slots
	// One pass over the points: each fills the slots up to its own with its
	// position, so that index[j] is the first point whose slot is >= j.
	j := uint64(0)
	for i, p := range s.points {
		hi, _ := bits.Mul64(p, slots)
		for ; j <= hi; j++ {
			index[j] = uint32(i)
		}
	}
	for ; j <= slots; j++ {
		index[j] = uint32(n)
	}
	s.index = index
}
