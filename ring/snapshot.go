package ring

import (
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

	// index and slots locate a hash's bucket of points; see index.go.
	index []uint32
	slots uint64
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
