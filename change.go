package kolco

import (
	"slices"
	"strings"
)

// Change is one change of membership, applied as a whole by
// [Mutable.Apply]: every part of it or, on error, none.
//
// Its parts apply in the order of the fields: Remove, then Add, then
// Update. Within Remove and Add, history-dependent algorithms (jump,
// jumpback, anchor, slots) take the nodes in the order their packages
// document; [Diff] lists them sorted by ID, so that every process that
// turns the same two node lists into a change applies the same one.
type Change struct {
	// Remove names the nodes to remove, by ID. Each must be present and
	// named once.
	Remove []string
	// Add lists the nodes to add. Each must be valid and new once the
	// removals are made, and listed once.
	Add []Node
	// Update lists present nodes with new values, matched by ID; each ID
	// at most once. A new weight re-weights the node as
	// [Mutable.Reweight] does, except that zero reads as 1, as
	// everywhere in a [Node]. A new Zone or Addr alone moves no key: Addr
	// is never hashed, and a zone decides only the order of the replicas
	// that zone-aware placements return.
	Update []Node
}

// Empty reports whether c has nothing to apply.
func (c Change) Empty() bool {
	return len(c.Remove) == 0 && len(c.Add) == 0 && len(c.Update) == 0
}

// Diff returns the change that turns a placement over the nodes from into
// one over the nodes to: the IDs only in from are removed, the nodes only
// in to are added, and the nodes in both whose effective weight, zone or
// address differ are updated with their values in to. Each list is sorted
// by ID. Equal lists, whatever their order, give the empty change.
//
// A node whose Addr alone differs is updated without moving any key, and
// one whose Zone alone differs moves none either (it may reorder a
// zone-aware placement's replicas); see [Change.Update]. So a reload that
// only readdresses servers costs nothing.
//
// Diff does not validate: an ID repeated in to is listed in Add, and
// invalid nodes are listed as they are, so that [Mutable.Apply] refuses
// the change with the error it would give for them.
func Diff(from, to []Node) Change {
	old := make(map[string]Node, len(from))
	for _, n := range from {
		old[n.ID] = n
	}
	var c Change
	seen := make(map[string]bool, len(to))
	for _, n := range to {
		prev, ok := old[n.ID]
		switch {
		case seen[n.ID] || !ok:
			c.Add = append(c.Add, n)
		case prev.EffectiveWeight() != n.EffectiveWeight() || prev.Zone != n.Zone || prev.Addr != n.Addr:
			c.Update = append(c.Update, n)
		}
		seen[n.ID] = true
	}
	for id := range old {
		if !seen[id] {
			c.Remove = append(c.Remove, id)
		}
	}
	slices.Sort(c.Remove)
	byID := func(a, b Node) int { return strings.Compare(a.ID, b.ID) }
	slices.SortStableFunc(c.Add, byID)
	slices.SortStableFunc(c.Update, byID)
	return c
}
