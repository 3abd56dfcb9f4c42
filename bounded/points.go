package bounded

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/kolco-dev/kolco"
)

// The ring below is deliberately minimal and private to this package: the
// bounded-load walk needs to step through the owners of consecutive points
// one at a time, without allocating, and read each owner's load as it
// goes; a general ring's lookup API returns whole answers instead. Keeping
// the walk here also keeps this package free of another package's
// internals.

// point is one ring point while a ring is being built.
type point struct {
	at    uint64
	owner int32
}

func comparePoints(a, b point) int {
	if c := cmp.Compare(a.at, b.at); c != 0 {
		return c
	}
	return cmp.Compare(a.owner, b.owner) // equal points: lower ID first
}

// pointCount returns the number of points of a node of weight w.
func (r *Ring) pointCount(w float64) int {
	return max(1, int(math.Round(w*float64(r.cfg.Points))))
}

// build returns the state for nodes, reusing from old (if any) the points
// and load counters of nodes that stay with the same weight: only new or
// re-weighted nodes are hashed, and their points are merged in.
func (r *Ring) build(nodes []kolco.Node, old *state) (*state, error) {
	slices.SortFunc(nodes, func(a, b kolco.Node) int { return cmp.Compare(a.ID, b.ID) })
	s := &state{nodes: nodes, load: make([]*atomic.Int64, len(nodes))}
	remap := []int32{}
	if old != nil {
		remap = make([]int32, len(old.nodes))
	}
	fresh := make([]bool, len(nodes))
	total := 0
	for i, nd := range nodes {
		s.weightSum += nd.EffectiveWeight()
		total += r.pointCount(nd.EffectiveWeight())
		fresh[i] = true
		if old == nil {
			s.load[i] = new(atomic.Int64)
			continue
		}
		if j, ok := old.index(nd.ID); ok {
			s.load[i] = old.load[j]
			if old.nodes[j].EffectiveWeight() == nd.EffectiveWeight() {
				fresh[i] = false
				remap[j] = int32(i) + 1 // 0 means dropped
			}
		} else {
			s.load[i] = new(atomic.Int64)
		}
	}
	if total > maxPoints {
		return nil, fmt.Errorf("%w: %d ring points exceed %d (weights too large)", kolco.ErrBadConfig, total, maxPoints)
	}
	var added []point
	var buf []byte
	for i, nd := range nodes {
		if !fresh[i] {
			continue
		}
		for p := range r.pointCount(nd.EffectiveWeight()) {
			buf = strconv.AppendInt(append(append(buf[:0], nd.ID...), '#'), int64(p), 10)
			added = append(added, point{r.cfg.Hash(string(buf)), int32(i)})
		}
	}
	slices.SortFunc(added, comparePoints)
	s.points = make([]uint64, 0, total)
	s.owner = make([]int32, 0, total)
	k := 0
	if old != nil {
		for j, at := range old.points {
			o := remap[old.owner[j]]
			if o == 0 {
				continue
			}
			kept := point{at, o - 1}
			for ; k < len(added) && comparePoints(added[k], kept) < 0; k++ {
				s.push(added[k])
			}
			s.push(kept)
		}
	}
	for ; k < len(added); k++ {
		s.push(added[k])
	}
	s.buildIndex()
	return s, nil
}

// buildIndex fills s.start: with b bits, start[j] is the first point whose
// top b bits are >= j, so that a search only bisects the few points that
// share the key's top bits - one or two cache misses instead of
// log2(points).
func (s *state) buildIndex() {
	b := bits.Len(uint(len(s.points)))
	s.shift = uint(64 - b)
	s.start = make([]uint32, 1<<b+1)
	i := 0
	for j := range s.start {
		for i < len(s.points) && s.points[i]>>s.shift < uint64(j) {
			i++
		}
		s.start[j] = uint32(i)
	}
}

func (s *state) push(p point) {
	s.points = append(s.points, p.at)
	s.owner = append(s.owner, p.owner)
}

// search returns the index of the first point at or after h, wrapping to 0.
func (s *state) search(h uint64) int {
	j := h >> s.shift
	lo, hi := int(s.start[j]), int(s.start[j+1])
	i, _ := slices.BinarySearch(s.points[lo:hi], h)
	if i += lo; i == len(s.points) {
		return 0
	}
	return i
}

// capacity returns ceil((1+ε) * load * w / W) for node i, saturating at
// the largest int64 for a huge ε.
func (s *state) capacity(eps float64, i int, load int64) int64 {
	c := math.Ceil((1 + eps) * float64(load) * s.nodes[i].EffectiveWeight() / s.weightSum)
	if c >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(c)
}
