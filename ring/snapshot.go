package ring

import (
	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// Snapshot is one immutable state of a [Ring]. A change never modifies a
// published snapshot: it builds the next one beside it and swaps a
// pointer. A program that keeps state of its own per node, such as load
// counters, pairs it with the Snapshot it was built for, so that a walk
// over the points never meets a node its state does not know (package
// bounded does this).
type Snapshot struct {
	cfg    *Config   // the ring's, defaults filled in
	points []uint64  // sorted ascending; equal points ordered by owner (= by ID)
	owners ownerList // owners.at(i) indexes nodes for points[i]
	set    nodeset.Set
	nodes  []kolco.Node // set.View(), sorted by ID
	zoneOf []uint32     // zone index of each node
	zones  int          // number of distinct zones

	// table, base, off and slots answer lookups; see index.go.
	table    []uint32
	base     []uint32
	off      []uint16
	slots    uint64
	offShift uint
}

// Snapshot returns the ring's current state.
func (r *Ring) Snapshot() *Snapshot { return r.m.Load() }

// Len returns the number of nodes.
func (s *Snapshot) Len() int { return len(s.nodes) }

// Node returns the i-th node in ID order, the order of [Ring.Nodes].
func (s *Snapshot) Node(i int) kolco.Node { return s.nodes[i] }

// Nodes returns a copy of the nodes, sorted by ID.
func (s *Snapshot) Nodes() []kolco.Node { return s.set.Nodes() }

// Index returns the position of node id in ID order.
func (s *Snapshot) Index(id string) (int, bool) { return s.set.Index(id) }

// Points returns the number of points.
func (s *Snapshot) Points() int { return len(s.points) }

// Successor returns the index of the first point at or after h, wrapping
// past the last point to the first, or -1 when the ring has no points.
func (s *Snapshot) Successor(h uint64) int {
	if len(s.points) == 0 {
		return -1
	}
	return s.successor(h)
}

// Owner returns the index in ID order of the node that owns point p, for p
// in [0, Points()). Points follow one another clockwise: p+1, wrapping
// from the last to 0.
func (s *Snapshot) Owner(p int) int { return int(s.owners.at(p)) }

// maxBitsetNodes is the node count up to which walk tracks taken nodes
// and zones in a bitset on the stack; larger rings compare against the
// result itself, which costs time but never an allocation.
const maxBitsetNodes = 2048

type bitset [maxBitsetNodes / 64]uint64

func (b *bitset) has(i uint32) bool { return b[i>>6]&(1<<(i&63)) != 0 }
func (b *bitset) set(i uint32)      { b[i>>6] |= 1 << (i & 63) }

// walk appends up to n distinct nodes met clockwise from point start.
func (s *Snapshot) walk(dst []kolco.Node, start, n int, zoneAware bool) []kolco.Node {
	n = min(n, len(s.nodes))
	base := len(dst)
	var taken, zoneTaken bitset
	small := len(s.nodes) <= maxBitsetNodes
	if zoneAware && s.zones > 1 {
		zonesLeft := s.zones
		for k, p := 0, start; k < len(s.points) && len(dst)-base < n && zonesLeft > 0; k++ {
			o := s.owners.at(p)
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
		o := s.owners.at(p)
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

func (s *Snapshot) isTaken(got []kolco.Node, b *bitset, small bool, o uint32) bool {
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

func (s *Snapshot) zoneIsTaken(got []kolco.Node, b *bitset, small bool, o, z uint32) bool {
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
