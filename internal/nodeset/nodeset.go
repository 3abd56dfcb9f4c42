// Package nodeset is the membership engine every placement algorithm of
// this module is built on: an immutable node set sorted by ID that applies
// a [kolco.Change] and reports what it changed ([Delta]), a copy-on-write
// [Cell] for an algorithm's state, and the [Engine] that ties them into the
// [kolco.Mutable] methods, so that an algorithm writes only how it
// builds its next state from the old one and the delta.
//
// It also holds the canonical encoding of placement states and identities
// ([Writer], [Reader]) and the replica-walk helpers the algorithms share.
package nodeset

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kolco-dev/kolco"
)

// Set is an immutable set of valid nodes with distinct IDs, sorted by ID.
// Changes return a new Set and leave the receiver untouched. The zero Set
// is empty.
type Set struct {
	nodes []kolco.Node
}

// New validates nodes and returns them as a Set. The error wraps
// kolco.ErrBadNodeID, kolco.ErrBadWeight or kolco.ErrDuplicateNode.
func New(nodes []kolco.Node) (Set, error) {
	d, err := Set{}.Apply(kolco.Change{Add: nodes})
	return d.New, err
}

// CheckWeight returns an error wrapping kolco.ErrBadWeight unless w is a
// positive, finite number. Unlike kolco.Node.Validate it reads zero as
// zero, for a weight set explicitly: a Reweight, a weight column.
func CheckWeight(w float64) error {
	if !(w > 0) || math.IsInf(w, 0) {
		return fmt.Errorf("%w (got %v)", kolco.ErrBadWeight, w)
	}
	return nil
}

// CheckNew validates nodes about to join a set whose current IDs are
// reported by has: each must be valid, new, and named once. It is the
// admission check of every kolco.Mutable of this module. The error wraps
// kolco.ErrBadNodeID, kolco.ErrBadWeight or kolco.ErrDuplicateNode.
func CheckNew(has func(id string) bool, nodes []kolco.Node) error {
	seen := make(map[string]struct{}, len(nodes))
	for _, n := range nodes {
		if err := n.Validate(); err != nil {
			return err
		}
		if _, dup := seen[n.ID]; dup || has(n.ID) {
			return fmt.Errorf("%w: %q", kolco.ErrDuplicateNode, n.ID)
		}
		seen[n.ID] = struct{}{}
	}
	return nil
}

// Len returns the number of nodes.
func (s Set) Len() int { return len(s.nodes) }

// At returns the i-th node in ID order.
func (s Set) At(i int) kolco.Node { return s.nodes[i] }

// View returns the set's own slice of nodes, sorted by ID, for lookups that
// return a node without copying the set. The caller must not modify it.
func (s Set) View() []kolco.Node { return s.nodes }

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

// Delta is a change applied to a set: the set before and after it and what
// changed between them, for an algorithm to build its next state from.
type Delta struct {
	// Old and New are the sets before and after the change.
	Old, New Set
	// Removed holds the removed nodes as they were, in the order the
	// change names them.
	Removed []kolco.Node
	// Added holds the added nodes in the order the change lists them. A
	// node removed and added back in one change is in both lists.
	Added []kolco.Node
	// Reweighted holds, in the change's order, the updated nodes whose
	// effective weight changed, with their new values.
	Reweighted []kolco.Node
}

// Apply returns the delta of the change c applied to s: Remove, then Add,
// then Update, as [kolco.Change] defines. The error wraps
// kolco.ErrUnknownNode (removing or updating an absent ID, removing one
// twice), kolco.ErrDuplicateNode (adding a present ID, naming one twice in
// Add or in Update), kolco.ErrBadNodeID or kolco.ErrBadWeight; s is never
// modified.
func (s Set) Apply(c kolco.Change) (Delta, error) {
	d := Delta{Old: s}
	gone := make(map[string]bool, len(c.Remove))
	for _, id := range c.Remove {
		i, ok := s.Index(id)
		if !ok || gone[id] {
			return Delta{}, fmt.Errorf("remove: %w: %q", kolco.ErrUnknownNode, id)
		}
		gone[id] = true
		d.Removed = append(d.Removed, s.nodes[i])
	}
	if err := CheckNew(func(id string) bool { return s.Has(id) && !gone[id] }, c.Add); err != nil {
		return Delta{}, fmt.Errorf("add: %w", err)
	}
	d.Added = slices.Clone(c.Add)
	d.New = Set{merge(s.nodes, gone, c.Add)}
	updated := make(map[string]bool, len(c.Update))
	for _, u := range c.Update {
		i, ok := d.New.Index(u.ID)
		switch {
		case !ok:
			return Delta{}, fmt.Errorf("update: %w: %q", kolco.ErrUnknownNode, u.ID)
		case updated[u.ID]:
			return Delta{}, fmt.Errorf("update: %w: %q named twice", kolco.ErrDuplicateNode, u.ID)
		}
		if err := u.Validate(); err != nil {
			return Delta{}, fmt.Errorf("update: %w", err)
		}
		updated[u.ID] = true
		if d.New.nodes[i].EffectiveWeight() != u.EffectiveWeight() {
			d.Reweighted = append(d.Reweighted, u)
		}
		d.New.nodes[i] = u
	}
	return d, nil
}

// merge returns the nodes of old not in gone with add merged in, sorted by
// ID. Only the newcomers are sorted: a change to a large set costs
// O(N + k log k), not a full re-sort. The result is a new slice.
func merge(old []kolco.Node, gone map[string]bool, add []kolco.Node) []kolco.Node {
	add = SortedByID(add)
	out := make([]kolco.Node, 0, len(old)-len(gone)+len(add))
	j := 0
	for _, n := range old {
		if gone[n.ID] {
			continue
		}
		for ; j < len(add) && add[j].ID < n.ID; j++ {
			out = append(out, add[j])
		}
		out = append(out, n)
	}
	return append(out, add[j:]...)
}

// SortedByID returns a copy of nodes sorted by ID, equal IDs in their
// order.
func SortedByID(nodes []kolco.Node) []kolco.Node {
	return slices.SortedStableFunc(slices.Values(nodes), func(a, b kolco.Node) int { return strings.Compare(a.ID, b.ID) })
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
