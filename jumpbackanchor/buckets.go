package jumpbackanchor

import "github.com/kolco-dev/kolco/internal/jumpbackhash"

// The bucket set is hash4j's ConsistentJumpBackAnchorBucketSetHasher read
// as data: buckets 0..size-1, of which those on the stack removed are out
// of work. JumpBackHash over size buckets picks a key's first bucket. A
// removed bucket keeps an entry of memory-optimised AnchorHash (Mendelson
// et al., arXiv:1812.09674, the "mem" version of cpp-anchorhash): the
// number a of buckets that still worked after its removal, and the bucket
// that took its place in the working set as it stood just before, the
// view of a+1 buckets. A key on a removed bucket draws a position below a
// from the same generator and reads it in the view of a buckets, following
// replacements made while a or more buckets worked, until it reaches a
// working bucket.

// entry is what a removed bucket keeps; a working bucket's is zero.
type entry struct {
	a  uint32 // buckets that worked after the removal, at least 1
	dk int32  // the bucket that took this one's place, minus this one
}

// buckets is the bucket set's state. Changes copy it (see clone).
type buckets struct {
	size    int     // hash4j's historicMaxNumBuckets
	removed []int32 // the stack of removed buckets, the first removed first
	// ka holds an entry per bucket while a bucket is removed, and is nil
	// while none is, so that a lookup without removals reads nothing but
	// its own bucket.
	ka []entry
}

// working returns the number of working buckets.
func (s *buckets) working() int { return s.size - len(s.removed) }

// entryOf returns bucket b's entry.
func (s *buckets) entryOf(b int) entry {
	if b < len(s.ka) {
		return s.ka[b]
	}
	return entry{}
}

// view returns the bucket at position b of the working set as it stood
// with v buckets: b itself, or the bucket that took its place when it
// left while v or more buckets worked, and so on.
func (s *buckets) view(b int, v uint32) int {
	for b < len(s.ka) {
		e := s.ka[b]
		if e.a < v {
			break
		}
		b += int(e.dk)
	}
	return b
}

// bucket returns the working bucket of the key hash kh. The caller
// guarantees at least one working bucket.
func (s *buckets) bucket(kh uint64) int {
	if s.size <= 1 {
		return 0
	}
	b32, g := jumpbackhash.Bucket(kh, uint32(s.size))
	b := int(b32)
	for b < len(s.ka) {
		a := s.ka[b].a
		if a == 0 {
			break
		}
		var x uint32
		x, g = jumpbackhash.Uniform(g, a)
		b = s.view(int(x), a)
	}
	return b
}

// add puts a bucket back to work and returns it: the most recently
// removed one, or a new one at the end when none is removed. s must be a
// private copy.
func (s *buckets) add() int {
	if len(s.removed) == 0 {
		s.size++
		return s.size - 1
	}
	b := int(s.removed[len(s.removed)-1])
	s.removed = s.removed[:len(s.removed)-1]
	s.ka[b] = entry{}
	if len(s.removed) == 0 {
		s.ka = nil
	}
	return b
}

// remove takes working bucket b out of work, as hash4j does: removing the
// last working bucket empties the set; the last bucket, while none is
// removed, goes by shrinking the set (JumpBackHash over one bucket fewer);
// any other is pushed on the stack with its entry. s must be a private
// copy.
func (s *buckets) remove(b int) {
	switch {
	case s.working() == 1:
		*s = buckets{}
	case b == s.size-1 && len(s.removed) == 0:
		s.size--
	default:
		s.removed = append(s.removed, int32(b))
		if s.ka == nil {
			s.ka = make([]entry, s.size)
		}
		n := s.working()
		h := s.view(n, uint32(n)+1)
		s.ka[b] = entry{a: uint32(n), dk: int32(h - b)}
	}
}

// clone returns a copy that a change may modify.
func (s *buckets) clone() buckets {
	c := *s
	c.removed = append([]int32(nil), s.removed...)
	if s.ka != nil {
		c.ka = append([]entry(nil), s.ka...)
	}
	return c
}
