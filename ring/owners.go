package ring

// ownerList holds the owner of each point, an index into the snapshot's
// nodes: its low 16 bits in lo, and its high bits in hi only when the ring
// has more than 65,536 nodes (hi is nil otherwise), so that owners cost 2
// bytes per point in every ring but the largest.
type ownerList struct {
	lo, hi []uint16
}

// makeOwners returns a list of n owners of a ring of the given node count.
// lo has room for scanWidth more, as the points have for their sentinels,
// so that a search can read the owners of the points it counts at once.
func makeOwners(n, nodes int) ownerList {
	o := ownerList{lo: make([]uint16, n, n+scanWidth)}
	if nodes > narrowOwners {
		o.hi = make([]uint16, n)
	}
	return o
}

// len returns the number of owners.
func (o *ownerList) len() int { return len(o.lo) }

// at returns owner i.
func (o *ownerList) at(i int) uint32 {
	if o.hi != nil {
		return uint32(o.hi[i])<<16 | uint32(o.lo[i])
	}
	return uint32(o.lo[i])
}

// set sets owner i to v.
func (o *ownerList) set(i int, v uint32) {
	o.lo[i] = uint16(v)
	if o.hi != nil {
		o.hi[i] = uint16(v >> 16)
	}
}
