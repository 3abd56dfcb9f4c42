// Package nodeset keeps an immutable node set sorted by ID and applies the
// changes of the [kolco.Membership] interface to it, so that every
// placement package validates membership changes the same way.
package nodeset

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kolco-dev/kolco"
)

// Set is an immutable set of valid nodes with distinct IDs, sorted by ID.
// Changes return a new Set and leave the receiver untouched.
type Set struct {
	nodes []kolco.Node
}

// New validates nodes and returns them as a Set. The error wraps
// kolco.ErrBadNodeID, kolco.ErrBadWeight or kolco.ErrDuplicateNode.
func New(nodes []kolco.Node) (Set, error) {
	return Set{}.Add(nodes...)
}

// Len returns the number of nodes.
func (s Set) Len() int { return len(s.nodes) }

// At returns the i-th node in ID order.
func (s Set) At(i int) kolco.Node { return s.nodes[i] }

// Nodes returns a copy of the nodes, sorted by ID.
func (s Set) Nodes() []kolco.Node { return slices.Clone(s.nodes) }

// Index returns the position of the node with the given ID.
func (s Set) Index(id string) (int, bool) {
	return slices.BinarySearchFunc(s.nodes, id, func(n kolco.Node, id string) int {
		return strings.Compare(n.ID, id)
	})
}

// Has reports whether the set holds a node with the given ID.
func (s Set) Has(id string) bool {
	_, ok := s.Index(id)
	return ok
}

// Add returns the set with nodes added. The error wraps
// kolco.ErrBadNodeID, kolco.ErrBadWeight or kolco.ErrDuplicateNode.
func (s Set) Add(nodes ...kolco.Node) (Set, error) {
	if err := kolco.CheckNew(s.Has, nodes); err != nil {
		return s, err
	}
	// Sort only the newcomers and merge: a change to a large set costs
	// O(N + k log k), not a full re-sort.
	add := slices.Clone(nodes)
	slices.SortFunc(add, func(a, b kolco.Node) int { return strings.Compare(a.ID, b.ID) })
	out := make([]kolco.Node, 0, len(s.nodes)+len(add))
	i, j := 0, 0
	for i < len(s.nodes) && j < len(add) {
		if s.nodes[i].ID < add[j].ID {
			out = append(out, s.nodes[i])
			i++
		} else {
			out = append(out, add[j])
			j++
		}
	}
	out = append(append(out, s.nodes[i:]...), add[j:]...)
	return Set{out}, nil
}

// Remove returns the set without the nodes of the given IDs. The error
// wraps kolco.ErrUnknownNode, also for an ID named twice.
func (s Set) Remove(ids ...string) (Set, error) {
	gone := make(map[string]struct{}, len(ids))
	for _, id := range ids {
		if _, dup := gone[id]; dup || !s.Has(id) {
			return s, fmt.Errorf("%w: %q", kolco.ErrUnknownNode, id)
		}
		gone[id] = struct{}{}
	}
	out := make([]kolco.Node, 0, len(s.nodes)-len(gone))
	for _, n := range s.nodes {
		if _, ok := gone[n.ID]; !ok {
			out = append(out, n)
		}
	}
	return Set{out}, nil
}

// Reweight returns the set with the weight of one node changed. The error
// wraps kolco.ErrUnknownNode or kolco.ErrBadWeight (zero included).
func (s Set) Reweight(id string, w float64) (Set, error) {
	if err := kolco.CheckWeight(w); err != nil {
		return s, fmt.Errorf("node %q: %w", id, err)
	}
	i, ok := s.Index(id)
	if !ok {
		return s, fmt.Errorf("%w: %q", kolco.ErrUnknownNode, id)
	}
	out := slices.Clone(s.nodes)
	out[i].Weight = w
	return Set{out}, nil
}

// AppendNew appends nd to dst unless dst[start:] already holds its ID: one
// step of a preference-list walk, which meets the same node many times.
func AppendNew(dst []kolco.Node, start int, nd kolco.Node) []kolco.Node {
	for _, d := range dst[start:] {
		if d.ID == nd.ID {
			return dst
		}
	}
	return append(dst, nd)
}

// AppendRest appends nodes, in order and skipping those dst[start:]
// already holds, until dst[start:] holds n: it completes a walk that ended
// before it met n distinct nodes.
func AppendRest(dst []kolco.Node, start, n int, nodes []kolco.Node) []kolco.Node {
	for _, nd := range nodes {
		if len(dst)-start >= n {
			break
		}
		dst = AppendNew(dst, start, nd)
	}
	return dst
}
