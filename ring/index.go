package ring

import (
	"math"
	"math/bits"
	"sort"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
)

// A lookup needs the owner of the first point at or after the key's hash.
// The ring answers most keys with one read, and a few with a search:
//
//   - The circle is cut into slots, 1.25 per point; the slot of h is the
//     high word of h × slots (a multiplication, for any slot count) and
//     the low word is h's position within its slot. Each slot has a 4-byte
//     entry: the owner of the first point at or after the slot's start (16
//     bits), the top 8 bits of the position of the slot's first point (255
//     without points), and those of the previous slot's last point (255
//     when the previous slot has none).
//   - A hash in slot j reads entries j and j+1, which share a cache line
//     but for one slot in sixteen. Before slot j's first point, entry j's
//     owner is the answer; after its last point (whose byte entry j+1
//     holds), entry j+1's owner is. Only a hash between the first and last
//     point of a slot with two or more points, or one whose byte equals a
//     point's (or is 255 in a slot without points), needs the points: 7.6%
//     of uniform hashes (from the Poisson law of points per slot;
//     TestSlotsAnswerMostHashesAtOnce measures it).
//   - The test (one comparison of byte differences) and the choice of
//     owner (a conditional move) are not branches: ifs there compiled to
//     branches that mispredicted on half the keys. The
//     one branch, to the search, mispredicts on the 7.6%, and is the
//     largest single cost left: each costs about 15 ns at 100 × 160 points
//     (the work queued behind the branch is thrown away) and about 200 ns
//     at a million points, where the search's reads follow the entries'
//     miss: the offset, then the points with their owners (read together,
//     not the owner after the count).
//   - The search starts at the first point of the slot's block of eight
//     slots (a 32-bit base per 1024 slots plus a 16-bit offset per block)
//     and counts, without a branch, how many of the eight points from
//     there are below h: the points are sorted, so the count is the
//     answer's offset. A block crowded past eight points falls back to a
//     binary search. Eight sentinel points past the end keep the count in
//     bounds.
//   - Owners take 2 bytes per point. A ring of more than 65,536 nodes keeps
//     their high bits in a second array; no owner of it fits an entry, so
//     its entries send every hash to the search, with one slot per two
//     points and an offset per two slots.
//
// Memory: 8 bytes per point, 2 for its owner, 5 for the entries, 0.3 for
// the offsets: 15.3 (the previous layout, an index of one slot per two
// points read before the points, used 14).
//
// Tried and dropped, measured in CPU time as multiples of hashing the same
// keys alone (interleaved rounds on this 2-core VM, busy with other work):
// entries of 16 bits at 3 slots per point, an owner for a slot without
// points or else an offset to its points (2.9x in a loop with the lookup
// written in, against 3.9x for the previous layout there, but 16.6 bytes a
// point); in rings of up to 255 nodes, the owner of a slot's second point
// in the entry, which cut the searched share to 2.8% but measured 4.4x
// against 3.3x for these entries (its arithmetic cost more than the
// searches it saved); at a million points, reading the points the search
// would need together with the entries, by a load kept alive or by a
// PREFETCHT0 from assembly (53 and 51 ns against 38-42 ns: every lookup
// then waits for, or streams, two lines instead of one); the owner's line
// read early in the search (no difference); loads without bounds checks
// through unsafe (3.13x against 3.21x, within the noise).
//
// Against buraksezer/consistent, whose lookup reads a 271-entry partition
// map whatever the node count (71-80 ns of CPU time here), the ring is 6-8x
// faster up to 100 nodes and at 1000 nodes × 20 points, but 2.3x at 1000 ×
// 160 and 1.5x at 10,000 × 160 (bench/README.md). What it reads decides
// it: at 10,000 × 160 the slot table alone is 8 MB, and one random read in
// a table of 4-16 MB cost 14-54 ns on this machine (with other work on it,
// the range of several runs; 21.2 ns in 8 MB beside buraksezer's 60.1 in
// the latest targets run), more than a fifth of buraksezer's lookup, so
// no layout that reads such a table at all can be 5x faster. Tried for the
// larger rings, in alternating processes (CPU time, 9 interleaved rounds,
// two runs each, load average 17-56): 2 slots a point, which halves the
// searched share, measured 9.9-10.9 ns at 100 × 160 against 12.8-13.5,
// 24.9-29.9 against 30.3-34.2 at 1000 × 160, the same within the noise at
// 10,000 nodes, and 1.63-1.72x the one-read floor at a million points
// against 1.76-1.91x, for 3 more bytes a point (18.3, over the goal of
// 16); 2.5 slots a point 1.68-1.97x there; 1 and 0.75 slots a point were
// slower everywhere (more searches: 30.6-64.6 and 40.5-80.7 ns at 1000 ×
// 160). At a million points the searched 7.6% take more than half of a
// lookup's time (a CPU profile: 520 of 960 ms in searchOwner): each waits
// behind its mispredicted branch for the slot's offset and then its
// points.
//
// Tried next for 1000 and 10,000 nodes and the million points, as
// prototypes in this package built from a ring's points and owners (each
// checked against the ring's lookup on 100,000-200,000 random hashes), all
// in one process in 9 interleaved rounds of 20 ms of CPU time, medians, ns
// per lookup over the 65,536 keys of the bench module (a million keys at
// 1000 × 1000), load average 14-29. Ring sizes in the order 100 × 160,
// 1000 × 20, 1000 × 160, 10,000 × 20, 10,000 × 160, 1000 × 1000; this
// layout measured 8.1, 8.8, 18.3, 20.6, 28.4 and 28.2 in the same run:
//
//   - No search at all, the entries' answer taken for every hash (wrong for
//     7.6% of them; a bound, not a design): 8.6, 9.0, 14.6, 13.6, 17.3,
//     18.1 (12.5, 14.6, 17.3 and 21.2 in another run).
//     buraksezer/consistent's lookup costs 50-60 ns in go test runs of
//     that day, so 5x means 10-12 ns: even without searches the ring
//     reaches it at 1000 × 160 only in its best rounds (10.9-11.5), and
//     not at 10,000 × 160 (15.9 at best), where the hash and one random
//     read in a 16 MB table alone, over the same 65,536 keys, cost
//     10.5-13.
//   - A direct table of cache-line buckets indexed by the hash's top bits:
//     per bucket 8 or 16 points' 15-bit positions and owners, and the
//     owner after its last point; the hash's position counted against the
//     bucket's without a branch (SWAR: two subtractions a word of four
//     lanes, a popcount), the points searched only when a position equals
//     the hash's or the bucket overflows (0.6-5% of hashes). 8 lanes at 5
//     and 6 points a bucket, 16 lanes at 10 and 12: 9.9-11.4 at 100 × 160,
//     24.4-27.2 at 1000 × 160, 38.6-44.0 at 10,000 × 160, 37.7-49.3 at a
//     million points (37.2 against 41.4 in the best of another run): the
//     count costs more than the searches it saves, and it needs 5.7-7.2
//     bytes a point where the slot table needs 5.3.
//   - The points in Eytzinger order with their owners, searched without a
//     branch but the loop's: 25.6, 38.0, 108.7, 118.1, 480.8, 435.0.
//   - The search run for every hash and chosen by conditional moves, so
//     that no hash mispredicts: 13.4, 15.9, 43.6, 44.9, 100.3, 92.3 (each
//     hash then waits for the offset and the points).
//   - 64-bit entries that also hold the owner of the slot's second point,
//     which answer slots of two points (1.7-1.85% of hashes searched):
//     7.5, 9.8, 16.2, 22.1, 33.1, 52.7 against 8.4, 9.5, 18.0, 27.8, 36.5,
//     45.3 for this layout in their run: faster up to 10,000 × 160 by
//     the searches saved, slower at a million points where the table
//     doubled to 10 MB misses more, and 20.3 bytes a point (goal 16).
//
// So no layout tried reaches 5x buraksezer/consistent at 1000 × 160 or at
// 10,000 nodes, and the one that comes closest at a million points (the
// 16-lane buckets) is within the noise of this one there and slower
// everywhere else; this layout stays. (The prototypes are not kept.)

// superShift sets the slots per entry of the base array: 1024. Each has the
// index of the first point at or after its first slot; offsets into it,
// one per few slots, take 2 bytes.
const superShift = 10

// scanWidth is the number of points the search counts without a branch,
// and the number of sentinel points past the end of the array.
const scanWidth = 8

// farOffset marks an offset too large for 16 bits (a crowded hash): the
// search then starts at the base entry.
const farOffset = 1<<16 - 1

// sentinel pads the points array past its end: no hash is below it.
const sentinel = math.MaxUint64

// narrowOwners is the node count up to which an owner fits in 16 bits.
const narrowOwners = 1 << 16

// Entry layout: the first owner in the low 16 bits, the position of the
// slot's first point in bits 16-23 and that of the previous slot's last
// point in bits 24-31.
const (
	ownerMask  = 1<<16 - 1
	firstShift = 16
	lastShift  = 24
	noPoint    = 0xff // position byte of a slot without points
)

// slotCount returns the number of slots for n points, 1.25 per point, and
// the shift from a slot to its offset entry: one offset per eight slots.
// When entries cannot hold owners (wide), one slot per two points and one
// offset per two slots, so that the search starts near the slot.
func slotCount(n int, wide bool) (slots uint64, offShift uint) {
	if wide {
		return uint64(max(n/2, 1)), 1
	}
	return uint64(max(n+n/4, 1)), 3
}

// lookup returns the node owning key in the current snapshot and its
// index in the snapshot's node set, or nil and -1 when the ring is empty.
// Locate, LocateID and LocateIndex are small enough to be inlined into
// their callers, and this one function hashes the key, loads the snapshot
// and reads the slot entries, with the rare search a call away: a lookup
// is one call besides the key hash's.
func (r *Ring) lookup(key string) (*kolco.Node, int) {
	// keyHash.hash written out: with two calls in it, it is not inlined,
	// and the extra call cost about a nanosecond.
	var h uint64
	if r.keys.xxh3 {
		h = keyhash.XXH3(key)
	} else {
		h = r.keys.fn(key)
	}
	s := r.m.Load()
	j, pos := bits.Mul64(h, s.slots)
	i, ok := answer(s.table[j], s.table[j+1], pos)
	if !ok {
		i = s.searchOwner(h, j)
	}
	// Only an empty ring, whose entries answer 0 without a search, has
	// no node i; the test also spares the bounds check.
	if uint(i) >= uint(len(s.nodes)) {
		return nil, -1
	}
	return &s.nodes[i], i
}

// lookupHash is lookup for a key whose hash is h.
func (r *Ring) lookupHash(h uint64) (*kolco.Node, int) {
	s := r.m.Load()
	j, pos := bits.Mul64(h, s.slots)
	i, ok := answer(s.table[j], s.table[j+1], pos)
	if !ok {
		i = s.searchOwner(h, j)
	}
	// Only an empty ring, whose entries answer 0 without a search, has
	// no node i; the test also spares the bounds check.
	if uint(i) >= uint(len(s.nodes)) {
		return nil, -1
	}
	return &s.nodes[i], i
}

// answer returns the owner that the entries e0 and e1 of slot j and j+1
// give a hash at position pos within slot j, and false when they cannot
// tell: when the hash's byte is between those of the slot's first and last
// points, both included. A slot without points has 255 for both, so that
// only the byte 255 is searched there. It has no branch, so that the
// compiler inlines it and no key mispredicts here: the range is one
// comparison of byte differences, and the one if compiles to a
// conditional move. Ifs for the tests compiled to branches that
// mispredicted on half the keys; two borrows of subtractions and an owner
// chosen with masks cost 3-4% more of a lookup at 100 × 160 (interleaved
// rounds).
func answer(e0, e1 uint32, pos uint64) (int, bool) {
	b := uint8(pos >> 56)
	first := uint8(e0 >> firstShift)
	last := uint8(e1 >> lastShift)
	o := e0
	if b > last {
		o = e1
	}
	return int(o & ownerMask), b-first > last-first
}

// searchOwner returns the owner of the first point >= h, for h in slot
// j, found among the points. When owners fit 16 bits it reads the owners
// of the eight points it counts together with the points, rather than the
// answer's owner after the count: at a million points both are cache
// misses, and one after the other they cost a second wait (15-20% of a
// lookup there, measured in interleaved rounds).
func (s *Snapshot) searchOwner(h, j uint64) int {
	if len(s.points) == 0 {
		// An empty ring's one slot sends the hashes whose byte is 255
		// here: there is no owner.
		return -1
	}
	if s.owners.hi != nil || cap(s.owners.lo) < len(s.points)+scanWidth {
		return int(s.owners.at(s.search(h, j)))
	}
	lo := s.blockStart(j)
	own := *(*[scanWidth]uint16)(s.owners.lo[lo : lo+scanWidth])
	c := s.count(h, lo)
	if c == scanWidth || lo+c == len(s.points) {
		// A crowded block, or past the last point: rare.
		return int(s.owners.at(s.search(h, j)))
	}
	return int(own[c])
}

// search returns the index of the first point >= h, wrapping to 0, for h
// in slot j. The ring must have points. It counts from the first point of
// j's offset block.
func (s *Snapshot) search(h, j uint64) int {
	lo := s.blockStart(j)
	i := lo + s.count(h, lo)
	if i-lo == scanWidth {
		i = s.searchLong(h, i, int(s.base[j>>superShift+1]))
	}
	if i == len(s.points) {
		return 0
	}
	return i
}

// blockStart returns the index of the first point of slot j's offset
// block.
func (s *Snapshot) blockStart(j uint64) int {
	lo := int(s.base[j>>superShift])
	if off := s.off[j>>s.offShift]; off != farOffset {
		lo += int(off)
	}
	return lo
}

// count returns how many of the scanWidth points from lo are below h.
func (s *Snapshot) count(h uint64, lo int) int {
	p := (*[scanWidth]uint64)(s.points[lo : lo+scanWidth])
	return count4((*[4]uint64)(p[0:4]), h) + count4((*[4]uint64)(p[4:8]), h)
}

// successor returns the index of the first point >= h, wrapping to 0. The
// ring must have points.
func (s *Snapshot) successor(h uint64) int {
	j, _ := bits.Mul64(h, s.slots)
	return s.search(h, j)
}

// count4 returns how many of p are below h, without a branch: each term is
// the borrow of p[k] - h, which is 1 exactly when p[k] < h. Each call is
// small enough for the compiler to inline; one function over more points
// (or a sum over a bool-to-int helper) was too large to inline, and the
// call with its register spills cost about a nanosecond.
func count4(p *[4]uint64, h uint64) int {
	_, b0 := bits.Sub64(p[0], h, 0)
	_, b1 := bits.Sub64(p[1], h, 0)
	_, b2 := bits.Sub64(p[2], h, 0)
	_, b3 := bits.Sub64(p[3], h, 0)
	return int(b0 + b1 + b2 + b3)
}

// searchLong returns the first index in [lo, hi) whose point is >= h, or
// hi: a binary search for the rare block crowded with points.
func (s *Snapshot) searchLong(h uint64, lo, hi int) int {
	return lo + sort.Search(hi-lo, func(k int) bool { return s.points[lo+k] >= h })
}
