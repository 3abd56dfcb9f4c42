// Package nodeset holds the node list shared by the compat placements: the
// servers in the other system's own order (the index space of Index), the
// subset that receives keys, and the ID-sorted copy Nodes returns.
package nodeset

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kolco-dev/kolco"
)

// Set is an immutable list of nodes. The zero value is an empty set.
type Set struct {
	all    []kolco.Node // in the other system's order
	placed []bool       // placed[i]: node i can receive keys
	byID   []kolco.Node // placed nodes sorted by ID
}

// New returns a set of nodes in the given order. placed, when not nil, marks
// the nodes that receive keys (a backup server does not); nil means all. The
// error wraps [kolco.ErrNoNodes] when no node is placed, and
// [kolco.ErrBadNodeID], [kolco.ErrBadWeight] or [kolco.ErrDuplicateNode] for a
// bad node.
func New(nodes []kolco.Node, placed []bool) (Set, error) {
	s := Set{all: slices.Clone(nodes), placed: make([]bool, len(nodes))}
	seen := make(map[string]struct{}, len(nodes))
	for i, n := range nodes {
		if err := n.Validate(); err != nil {
			return Set{}, err
		}
		if _, dup := seen[n.ID]; dup {
			return Set{}, fmt.Errorf("%w: %q", kolco.ErrDuplicateNode, n.ID)
		}
		seen[n.ID] = struct{}{}
		s.placed[i] = placed == nil || placed[i]
		if s.placed[i] {
			s.byID = append(s.byID, n)
		}
	}
	if len(s.byID) == 0 {
		return Set{}, kolco.ErrNoNodes
	}
	slices.SortFunc(s.byID, func(a, b kolco.Node) int { return strings.Compare(a.ID, b.ID) })
	return s, nil
}

// Len returns the number of nodes, placed or not.
func (s *Set) Len() int { return len(s.all) }

// At returns node i in the other system's order.
func (s *Set) At(i int) kolco.Node { return s.all[i] }

// Nodes returns a copy of the placed nodes sorted by ID.
func (s *Set) Nodes() []kolco.Node { return slices.Clone(s.byID) }

// AppendN appends up to n distinct placed nodes to dst: first the indexes
// next(0), next(1), ... yields (a ring walk, say) until it returns -1 or
// limit steps are taken, then any placed nodes still missing, in order. It
// allocates only when dst lacks capacity. The error wraps [kolco.ErrBadCount]
// when n < 1.
func (s *Set) AppendN(dst []kolco.Node, n int, limit int, next func(step int) int) ([]kolco.Node, error) {
	if n < 1 {
		return dst, fmt.Errorf("%w (got %d)", kolco.ErrBadCount, n)
	}
	want := min(n, len(s.byID))
	start := len(dst)
	for step := 0; step < limit && len(dst)-start < want; step++ {
		i := next(step)
		if i < 0 {
			break
		}
		dst = s.appendNew(dst, start, i)
	}
	for i := 0; i < len(s.all) && len(dst)-start < want; i++ {
		dst = s.appendNew(dst, start, i)
	}
	return dst, nil
}

func (s *Set) appendNew(dst []kolco.Node, start, i int) []kolco.Node {
	if !s.placed[i] {
		return dst
	}
	for _, have := range dst[start:] {
		if have.ID == s.all[i].ID {
			return dst
		}
	}
	return append(dst, s.all[i])
}
