package slots

import (
	"slices"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// Plan returns the slot moves that [Map.Migrate] would make for c, without
// making them. The error is that of [Map.Apply].
func (m *Map) Plan(c kolco.Change) ([]Move, error) {
	s := m.m.Load()
	next, err := m.m.Step(s, c)
	if err != nil {
		return nil, err
	}
	return movesBetween(s, next), nil
}

// Migrate makes the change c, as [Map.Apply] does, and returns the slots
// that moved, in slot order: the slots of removed nodes, plus each node's
// surplus over its new target (its highest-numbered slots), handed to the
// nodes below target in ID order and slot order. A slot whose previous
// owner is "" had none (the map was empty); a slot whose new owner is ""
// has none (every node was removed). The error is that of Apply.
func (m *Map) Migrate(c kolco.Change) ([]Move, error) {
	var moves []Move
	err := m.m.Update(func(old *state) (*state, error) {
		next, err := m.m.Step(old, c)
		if err != nil {
			return nil, err
		}
		moves = movesBetween(old, next)
		return next, nil
	})
	if err != nil {
		return nil, err
	}
	return moves, nil
}

// Apply makes the change c, all of it or, on error, none, moving the
// fewest slots that bring every node to its weighted target share (see
// [Map.Migrate], which also reports them). The error wraps
// [kolco.ErrUnknownNode], [kolco.ErrDuplicateNode], [kolco.ErrBadNodeID] or
// [kolco.ErrBadWeight].
func (m *Map) Apply(c kolco.Change) error { return m.m.Apply(c) }

// Rebalance moves the fewest slots that bring every node to its weighted
// target share and returns them. Only a map built by [FromRanges] can be off
// target; for any other map it moves nothing. It returns no error: the
// error result is always nil.
func (m *Map) Rebalance() ([]Move, error) { return m.Migrate(kolco.Change{}) }

// Add adds nodes and rebalances, moving slots only onto the new nodes. The
// error wraps [kolco.ErrDuplicateNode], [kolco.ErrBadNodeID] or
// [kolco.ErrBadWeight].
func (m *Map) Add(nodes ...kolco.Node) error { return m.m.Add(nodes...) }

// Remove removes the nodes with the given IDs and hands their slots to the
// remaining nodes. The error wraps [kolco.ErrUnknownNode].
func (m *Map) Remove(ids ...string) error { return m.m.Remove(ids...) }

// Reweight sets the weight of node id and rebalances, moving slots only to
// or from that node. The error wraps [kolco.ErrUnknownNode] or
// [kolco.ErrBadWeight].
func (m *Map) Reweight(id string, weight float64) error { return m.m.Reweight(id, weight) }

// plan returns the state over set reached from s by moving the fewest
// slots.
func plan(s *state, set nodeset.Set) *state {
	nodes := set.View()
	next := &state{set: set, nodes: nodes, owner: make([]int32, len(s.owner)), mask: s.mask}
	// Translate old owner indexes to new ones (-1: removed or none).
	remap := make([]int32, len(s.nodes))
	for i, nd := range s.nodes {
		remap[i] = -1
		if j, ok := set.Index(nd.ID); ok {
			remap[i] = int32(j)
		}
	}
	cur := make([]int, len(nodes))
	for slot, o := range s.owner {
		next.owner[slot] = -1
		if o >= 0 {
			next.owner[slot] = remap[o]
		}
		if o := next.owner[slot]; o >= 0 {
			cur[o]++
		}
	}
	if len(nodes) == 0 {
		return next.link()
	}
	tgt := targets(nodes, len(s.owner))
	free := freeSlots(next.owner, cur, tgt)
	k := 0
	for i := range nodes {
		for ; cur[i] < tgt[i]; cur[i]++ {
			next.owner[free[k]] = int32(i)
			k++
		}
	}
	return next.link()
}

// freeSlots returns, in ascending order, the slots that must change owner:
// those without an owner in the new set and each node's surplus over its
// target, taken from its highest-numbered slots so that runs stay contiguous.
func freeSlots(owner []int32, cur, tgt []int) []int {
	surplus := make([]int, len(cur))
	for i := range cur {
		surplus[i] = max(0, cur[i]-tgt[i])
		cur[i] -= surplus[i]
	}
	var free []int
	for slot := len(owner) - 1; slot >= 0; slot-- {
		o := owner[slot]
		if o >= 0 && surplus[o] == 0 {
			continue
		}
		if o >= 0 {
			surplus[o]--
		}
		free = append(free, slot)
	}
	slices.Reverse(free)
	return free
}

// movesBetween lists the slots whose owner differs between a and b.
func movesBetween(a, b *state) []Move {
	var moves []Move
	for slot := range a.owner {
		from, to := ownerID(a, slot), ownerID(b, slot)
		if from != to {
			moves = append(moves, Move{Slot: slot, From: from, To: to})
		}
	}
	return moves
}

func ownerID(s *state, slot int) string {
	if o := s.owner[slot]; o >= 0 {
		return s.nodes[o].ID
	}
	return ""
}
