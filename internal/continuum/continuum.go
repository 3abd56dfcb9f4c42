// Package continuum holds the sorted points of a hash ring and the owner of
// each, and the searches that the systems kolco reproduces make on them:
// the ketama continuum of libmemcached and twemproxy (Karger et al.,
// "Consistent Hashing and Random Trees", STOC 1997, as last.fm's ketama
// library laid it out), nginx's and Envoy's rings, HAProxy's tree of server
// nodes and Cassandra's token ring.
//
// A continuum is two parallel arrays, the points in ascending order and the
// owner index of each, rather than a slice of structs: a search reads only
// the points, 4 or 8 bytes each, and touches one owner at the end.
//
// Equal points are where the systems differ. Each adds its points in an
// order of its own (libmemcached by server, twemproxy by server name) and
// sorts them stably, so that of equal points the first added comes first
// and a search finds it; nginx then drops the later ones ([KeepFirst]);
// Cassandra refuses a token held twice ([Continuum.Repeated]). The search
// itself is one of two: the first point at or after a hash, wrapping past
// the last point to the first ([Continuum.Search]; nginx's "i % N" is the
// same wrap), or HAProxy's nearer of that point and the one before it
// ([Continuum.Nearest]); [Continuum.Walk] goes on around the ring from
// there, for a preference list.
package continuum

import (
	"cmp"
	"slices"
)

// Point is the type of a continuum's points: a 32-bit hash (libmemcached,
// twemproxy, nginx, HAProxy) or a 64-bit one (Envoy; Cassandra's signed
// tokens mapped to it in order).
type Point interface{ ~uint32 | ~uint64 }

// Ties says what [Builder.Build] does with equal points.
type Ties uint8

const (
	// KeepAll keeps every point; equal points stay in the order they were
	// added, so that a search finds the first added.
	KeepAll Ties = iota
	// KeepFirst keeps only the first added of equal points, as nginx does.
	KeepFirst
)

// Builder collects points with their owners in the order a system
// generates them. The zero value is an empty builder.
type Builder[P Point] struct {
	points []P
	owners []int32
}

// Grow makes room for n more points.
func (b *Builder[P]) Grow(n int) {
	b.points = slices.Grow(b.points, n)
	b.owners = slices.Grow(b.owners, n)
}

// Add adds point p owned by owner, an index into the system's own list of
// nodes (at most 2^31-1).
func (b *Builder[P]) Add(p P, owner int) {
	b.points = append(b.points, p)
	b.owners = append(b.owners, int32(owner))
}

// Len returns the number of points added.
func (b *Builder[P]) Len() int { return len(b.points) }

// Build returns the points sorted, equal points in the order they were
// added and treated as ties says. The builder may be reused afterwards.
func (b *Builder[P]) Build(ties Ties) Continuum[P] {
	order := b.sortedOrder()
	c := Continuum[P]{points: make([]P, 0, len(order)), owners: make([]int32, 0, len(order))}
	for _, i := range order {
		p := b.points[i]
		if ties == KeepFirst && len(c.points) > 0 && c.points[len(c.points)-1] == p {
			continue
		}
		c.points = append(c.points, p)
		c.owners = append(c.owners, b.owners[i])
	}
	return c
}

// sortedOrder returns the positions of the added points in ascending
// order of point, equal points by position: a stable sort. A 32-bit point
// and its position are packed into one uint64 and sorted as numbers, which
// is several times faster than sorting with a comparison function; a 64-bit
// point is sorted beside its position.
func (b *Builder[P]) sortedOrder() []int32 {
	order := make([]int32, len(b.points))
	if uint64(^P(0)) == 1<<32-1 {
		keys := make([]uint64, len(b.points))
		for i, p := range b.points {
			keys[i] = uint64(p)<<32 | uint64(i)
		}
		slices.Sort(keys)
		for i, k := range keys {
			order[i] = int32(uint32(k))
		}
		return order
	}
	type entry struct {
		p   P
		pos int32
	}
	es := make([]entry, len(b.points))
	for i, p := range b.points {
		es[i] = entry{p, int32(i)}
	}
	slices.SortFunc(es, func(x, y entry) int { return cmp.Or(cmp.Compare(x.p, y.p), cmp.Compare(x.pos, y.pos)) })
	for i, e := range es {
		order[i] = e.pos
	}
	return order
}

// Continuum is an immutable, sorted sequence of points, each with the index
// of its owner. It is safe for concurrent use; its searches do not allocate.
// The zero value has no points.
type Continuum[P Point] struct {
	points []P     // ascending
	owners []int32 // owners[i] owns points[i]
}

// Len returns the number of points.
func (c *Continuum[P]) Len() int { return len(c.points) }

// At returns point i, 0 <= i < Len.
func (c *Continuum[P]) At(i int) P { return c.points[i] }

// Search returns the index of the first point >= h, or 0 when every point
// is below h: the ring wraps. It returns 0 on a continuum without points.
func (c *Continuum[P]) Search(h P) int {
	lo, hi := 0, len(c.points)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.points[m] < h {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(c.points) {
		return 0
	}
	return lo
}

// Locate returns the owner of the first point >= h, wrapping: the owner of
// point Search(h). The continuum must have points.
func (c *Continuum[P]) Locate(h P) int { return int(c.owners[c.Search(h)]) }

// Nearest returns the index of the point HAProxy's consistent hash picks
// for h: of the first point >= h (wrapping) and the point before it
// (wrapping), the one nearer to h in modular distance, the one before on a
// tie. The continuum must have points.
func (c *Continuum[P]) Nearest(h P) int {
	next := c.Search(h)
	prev := next - 1
	if prev < 0 {
		prev = len(c.points) - 1
	}
	// Unsigned subtraction wraps, so each distance is measured the short
	// way round past zero, as in HAProxy's 32-bit arithmetic.
	if h-c.points[prev] <= c.points[next]-h {
		return prev
	}
	return next
}

// Owner returns the owner of point i, 0 <= i < Len.
func (c *Continuum[P]) Owner(i int) int { return int(c.owners[i]) }

// Walk returns the owner of the point step places after point start,
// wrapping past the last point: the walk of a preference list around the
// ring from a search's answer. The continuum must have points.
func (c *Continuum[P]) Walk(start, step int) int { return int(c.owners[(start+step)%len(c.owners)]) }

// Repeated returns the first point held twice, if any: Cassandra refuses a
// ring in which two endpoints hold one token.
func (c *Continuum[P]) Repeated() (P, bool) {
	for i := 1; i < len(c.points); i++ {
		if c.points[i] == c.points[i-1] {
			return c.points[i], true
		}
	}
	return 0, false
}
