package ring

import (
	"math/bits"
	"sort"

	"github.com/kolco-dev/kolco"
)

// snapshot is one immutable state of a ring. A change never modifies a
// published snapshot; it builds a new one and swaps the pointer.
type snapshot struct {
	points []uint64 // sorted ascending; equal points ordered by owner (= by ID)
	owners []uint32 // owners[i] indexes nodes for points[i]
	nodes  []kolco.Node
	zoneOf []uint32 // zone index of each node
	zones  int      // number of distinct zones

	// index[j] is the first i with points[i]>>shift >= j, for
	// j in [0, 1<<(64-shift)]. It turns the search into one probe and a
	// scan of about two points, instead of log2(len(points)) dependent
	// cache misses of a binary search.
	index []uint32
	shift uint
}

// linearLimit is the bucket length up to which search scans linearly:
// a few adjacent points share a cache line, so scanning them beats the
// branch mispredictions of a binary search.
const linearLimit = 16

// search returns the index of the first point >= h, wrapping to 0.
func (s *snapshot) search(h uint64) int {
	j := h >> s.shift
	lo, hi := int(s.index[j]), int(s.index[j+1])
	if hi-lo > linearLimit {
		lo += sort.Search(hi-lo, func(i int) bool { return s.points[lo+i] >= h })
	} else {
		for lo < hi && s.points[lo] < h {
			lo++
		}
	}
	if lo == len(s.points) {
		return 0
	}
	return lo
}

// buildIndex fills the prefix index with about one slot per two points,
// so that it costs at most 2 bytes per point.
func (s *snapshot) buildIndex() {
	n := len(s.points)
	b := 0
	if n >= 4 {
		b = bits.Len(uint(n)) - 2
	}
	s.shift = uint(64 - b)
	slots := 1 << b
	s.index = make([]uint32, slots+1)
	i := 0
	for j := 0; j <= slots; j++ {
		for i < n && s.points[i]>>s.shift < uint64(j) {
			i++
		}
		s.index[j] = uint32(i)
	}
	s.index[slots] = uint32(n)
}

// maxBitsetNodes is the node count up to which walk tracks taken nodes
// and zones in a bitset on the stack; larger rings compare against the
// result itself, which costs time but never an allocation.
const maxBitsetNodes = 2048

type bitset [maxBitsetNodes / 64]uint64

func (b *bitset) has(i uint32) bool { return b[i>>6]&(1<<(i&63)) != 0 }
func (b *bitset) set(i uint32)      { b[i>>6] |= 1 << (i & 63) }

// walk appends up to n distinct nodes met clockwise from point start.
func (s *snapshot) walk(dst []kolco.Node, start, n int, zoneAware bool) []kolco.Node {
	n = min(n, len(s.nodes))
	base := len(dst)
	var taken, zoneTaken bitset
	small := len(s.nodes) <= maxBitsetNodes
	if zoneAware && s.zones > 1 {
		zonesLeft := s.zones
		for k, p := 0, start; k < len(s.points) && len(dst)-base < n && zonesLeft > 0; k++ {
			o := s.owners[p]
			z := s.zoneOf[o]
			if !s.isTaken(dst[base:], &taken, small, o) && !s.zoneIsTaken(dst[base:], &zoneTaken, small, o, z) {
				dst = append(dst, s.nodes[o])
				if small {
					taken.set(o)
					zoneTaken.set(z)
				}
				zonesLeft--
			}
			if p++; p == len(s.points) {
				p = 0
			}
		}
	}
	for k, p := 0, start; k < len(s.points) && len(dst)-base < n; k++ {
		o := s.owners[p]
		if !s.isTaken(dst[base:], &taken, small, o) {
			dst = append(dst, s.nodes[o])
			if small {
				taken.set(o)
			}
		}
		if p++; p == len(s.points) {
			p = 0
		}
	}
	return dst
}

func (s *snapshot) isTaken(got []kolco.Node, b *bitset, small bool, o uint32) bool {
	if small {
		return b.has(o)
	}
	id := s.nodes[o].ID
	for i := range got {
		if got[i].ID == id {
			return true
		}
	}
	return false
}

func (s *snapshot) zoneIsTaken(got []kolco.Node, b *bitset, small bool, o, z uint32) bool {
	if small {
		return b.has(z)
	}
	zone := s.nodes[o].Zone
	for i := range got {
		if got[i].Zone == zone {
			return true
		}
	}
	return false
}
