package ring

import (
	"math/bits"
	"sort"
)

// buildTable pads the points with sentinels and fills the slot entries,
// the base array and the offsets from the points and owners.
func (s *Snapshot) buildTable() {
	s.padPoints()
	s.fillTable(slotCount(len(s.points), s.owners.hi != nil))
}

// fillTable fills the entries of slots slots, with an offset entry per
// 1<<offShift slots, from the padded points.
func (s *Snapshot) fillTable(slots uint64, offShift uint) {
	s.slots, s.offShift = slots, offShift
	s.table = make([]uint32, slots+1)
	s.base = make([]uint32, slots>>superShift+2)
	s.off = make([]uint16, slots>>offShift+1)
	s.fillSlots(0, slots, 0, 0, true)
	s.wideTable()
}

// updateTable fills the slot entries of s from old's, when s differs from
// old by the points added at the new indexes fresh, or by the points
// removed from the old indexes gone (both ascending), and by the
// renumbering remap of old owners. It copies old's entries with their
// owners renumbered and refills the few slots around each added or removed
// point: rebuilding every entry cost more than the rest of adding a node.
// A change of nodes' addresses alone only renumbers. It keeps old's slot
// count, and falls back to buildTable when that count would be under 1.1
// or over 1.35 per point, when the ring's first point changes (the entries
// past the last point refer to it), or when owners do not fit an entry.
func (s *Snapshot) updateTable(old *Snapshot, remap []uint32, fresh, gone []int) {
	n := uint64(len(s.points))
	keep := n > 0 && old.slots*10 >= n*11 && old.slots*20 <= n*27 && // 1.1 to 1.35 slots a point
		s.owners.hi == nil && old.owners.hi == nil &&
		(len(fresh) == 0 || fresh[0] > 0) && (len(gone) == 0 || gone[0] > 0)
	if !keep {
		s.buildTable()
		return
	}
	s.padPoints()
	s.slots, s.offShift = old.slots, old.offShift
	s.table = make([]uint32, len(old.table))
	for j, e := range old.table {
		s.table[j] = e&^ownerMask | remap[e&ownerMask]
	}
	// refill refills the slots from just after point x-1's to the one
	// after slot j: their first point, its owner or a position byte may
	// have changed. Point x-1 is unchanged or refilled already.
	refill := func(x int, j uint64) {
		prev, pos := bits.Mul64(s.points[x-1], s.slots)
		s.fillSlots(prev+1, min(j+1, s.slots), x, uint32(pos>>56), false)
	}
	for _, x := range fresh {
		refill(x, s.slotOf(x))
	}
	for k, r := range gone {
		// r's old neighbours are points r-k-1 and r-k of s.
		j, _ := bits.Mul64(old.points[r], s.slots)
		refill(r-k, j)
	}
	s.base = make([]uint32, len(old.base))
	s.off = make([]uint16, len(old.off))
	s.fillBlocks(old, fresh, gone)
}

// slotOf returns the slot of point i.
func (s *Snapshot) slotOf(i int) uint64 {
	j, _ := bits.Mul64(s.points[i], s.slots)
	return j
}

// padPoints puts scanWidth sentinels after the points.
func (s *Snapshot) padPoints() {
	n := len(s.points)
	if cap(s.points) < n+scanWidth {
		s.points = append(make([]uint64, 0, n+scanWidth), s.points...)
	}
	pad := s.points[n : n+scanWidth]
	for i := range pad {
		pad[i] = sentinel
	}
}

// wideTable sends every hash of a ring whose owners do not fit an entry to
// the search: its slots' first point is at byte 0 and their last at 255.
func (s *Snapshot) wideTable() {
	if s.owners.hi == nil {
		return
	}
	for j := range s.table {
		s.table[j] = 0xff << lastShift
	}
}

// fillSlots fills the entries of slots from to to (inclusive; to = slots
// is the entry past the last slot) from the points. Point i is the first
// in a slot at or after from, or in slot from-1 with the rest of that
// slot's points after it; last is the position byte of the point before i
// if it is in slot from-1, else noPoint. With blocks it also fills the base and
// offset entries of blocks that start in those slots. It walks the points
// a run of one slot at a time and fills the empty slots between two runs
// in a tight loop.
func (s *Snapshot) fillSlots(from, to uint64, i int, last uint32, blocks bool) {
	n := len(s.points)
	table, owners := s.table, s.owners.lo // an entry holds an owner's low 16 bits
	next, nextBlock := from, from>>s.offShift
	for ; i < n; i++ {
		j, pos := bits.Mul64(s.points[i], s.slots)
		if j > to {
			break
		}
		b := uint32(pos >> 56)
		if j >= next {
			// Point i is the first of slot j: slots next..j-1 are empty
			// and, like slot j, go to point i; the first of them gets the
			// last point's byte, the others and slot j noPoint as the
			// byte of their previous slot's last point.
			e := uint32(owners[i]) | noPoint<<firstShift
			table[next] = e | last<<lastShift
			for k := next + 1; k < j; k++ {
				table[k] = e | noPoint<<lastShift
			}
			carry := last
			if next < j {
				carry = noPoint
			}
			table[j] = uint32(owners[i]) | b<<firstShift | carry<<lastShift
			next = j + 1
			if blocks {
				// Blocks that start in slots up to j begin at point i.
				for ; nextBlock <= j>>s.offShift; nextBlock++ {
					s.setBlock(nextBlock, i)
				}
			}
		}
		last = b
	}
	if next > to {
		return
	}
	// The empty slots up to to go to point i, or past the last point to
	// the first.
	var own uint32
	if i < n {
		own = uint32(owners[i])
	} else if n > 0 {
		own = uint32(owners[0])
	}
	e := own | noPoint<<firstShift
	for k := next; k <= to; k++ {
		table[k] = e | noPoint<<lastShift
	}
	table[next] = e | last<<lastShift
	if blocks {
		for ; nextBlock < uint64(len(s.off)); nextBlock++ {
			s.setBlock(nextBlock, i)
		}
		s.base[len(s.base)-1] = uint32(i)
	}
}

// setBlock records point i as the first at or after the start of offset
// block b, and of its base block if b starts one.
func (s *Snapshot) setBlock(b uint64, i int) {
	start := b << s.offShift
	if start&(1<<superShift-1) == 0 {
		s.base[start>>superShift] = uint32(i)
	}
	s.off[b] = uint16(min(i-int(s.base[start>>superShift]), farOffset))
}

// fillBlocks fills the base and offset entries of s from old's: a block's
// first point moves by the points added before it less those removed.
func (s *Snapshot) fillBlocks(old *Snapshot, fresh, gone []int) {
	f, g := 0, 0 // points added, removed in slots before the block's start
	for b := range uint64(len(s.off)) {
		start := b << s.offShift
		for f < len(fresh) && s.slotOf(fresh[f]) < start {
			f++
		}
		for g < len(gone) && old.slotOf(gone[g]) < start {
			g++
		}
		var first int
		if start&(1<<superShift-1) == 0 || old.off[b] == farOffset {
			// The old entries hold this block's first point only as an
			// offset from its base block's: find it among the new points.
			first = sort.Search(len(s.points), func(i int) bool { return s.slotOf(i) >= start })
		} else {
			first = int(old.base[start>>superShift]) + int(old.off[b]) + f - g
		}
		s.setBlock(b, first)
	}
	s.base[len(s.base)-1] = uint32(len(s.points))
}
