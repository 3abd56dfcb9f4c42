package slots

import (
	"fmt"
	"slices"

	"github.com/kolco-dev/kolco"
)

// Change is one membership change: Remove applies first, then Add, then
// Weights (node ID -> new weight, for nodes present after Add).
type Change struct {
	Remove  []string           // IDs of nodes to remove
	Add     []kolco.Node       // nodes to add
	Weights map[string]float64 // new weights by node ID
}

// Plan returns the slot moves that [Map.Apply] would make for c, without
// making them. The error is that of Apply.
func (m *Map) Plan(c Change) ([]Move, error) {
	_, moves, err := plan(m.cur.Load(), c)
	return moves, err
}

// Apply makes the change c and returns the slots that moved, in slot order.
// It moves the fewest slots that bring every node to its weighted target
// share: the slots of removed nodes, plus each node's surplus over its new
// target (its highest-numbered slots), handed to the nodes below target in
// ID order and slot order. A slot whose previous owner is "" had none (the
// map was empty); a slot whose new owner is "" has none (every node was
// removed). On error nothing changes; the error wraps [kolco.ErrUnknownNode],
// [kolco.ErrDuplicateNode], [kolco.ErrBadNodeID] or [kolco.ErrBadWeight].
func (m *Map) Apply(c Change) ([]Move, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	next, moves, err := plan(m.cur.Load(), c)
	if err != nil {
		return nil, err
	}
	m.cur.Store(next)
	return moves, nil
}

// Rebalance moves the fewest slots that bring every node to its weighted
// target share and returns them. Only a map built by [FromRanges] can be off
// target; for any other map it moves nothing.
func (m *Map) Rebalance() ([]Move, error) { return m.Apply(Change{}) }

// Add adds nodes and rebalances, moving slots only onto the new nodes. The
// error wraps [kolco.ErrDuplicateNode], [kolco.ErrBadNodeID] or
// [kolco.ErrBadWeight].
func (m *Map) Add(nodes ...kolco.Node) error {
	_, err := m.Apply(Change{Add: nodes})
	return err
}

// Remove removes the nodes with the given IDs and hands their slots to the
// remaining nodes. The error wraps [kolco.ErrUnknownNode].
func (m *Map) Remove(ids ...string) error {
	_, err := m.Apply(Change{Remove: ids})
	return err
}

// Reweight sets the weight of node id and rebalances, moving slots only to
// or from that node. The error wraps [kolco.ErrUnknownNode] or
// [kolco.ErrBadWeight].
func (m *Map) Reweight(id string, weight float64) error {
	_, err := m.Apply(Change{Weights: map[string]float64{id: weight}})
	return err
}

// nextNodes returns the node set after c, sorted by ID.
func nextNodes(s *state, c Change) ([]kolco.Node, error) {
	nodes := slices.Clone(s.nodes)
	for _, id := range c.Remove {
		i, ok := indexOf(nodes, id)
		if !ok {
			return nil, fmt.Errorf("slots: remove: %w: %q", kolco.ErrUnknownNode, id)
		}
		nodes = slices.Delete(nodes, i, i+1)
	}
	has := func(id string) bool { _, ok := indexOf(nodes, id); return ok }
	if err := kolco.CheckNew(has, c.Add); err != nil {
		return nil, fmt.Errorf("slots: add: %w", err)
	}
	nodes = sortedCopy(append(nodes, c.Add...))
	for id, w := range c.Weights {
		i, ok := indexOf(nodes, id)
		if !ok {
			return nil, fmt.Errorf("slots: reweight: %w: %q", kolco.ErrUnknownNode, id)
		}
		if err := kolco.CheckWeight(w); err != nil {
			return nil, fmt.Errorf("slots: reweight %q: %w", id, err)
		}
		nodes[i].Weight = w
	}
	return nodes, nil
}

func indexOf(nodes []kolco.Node, id string) (int, bool) {
	return (&state{nodes: nodes}).index(id)
}

// plan computes the state after c and the moves that lead to it.
func plan(s *state, c Change) (*state, []Move, error) {
	nodes, err := nextNodes(s, c)
	if err != nil {
		return nil, nil, err
	}
	next := &state{nodes: nodes, owner: make([]int32, len(s.owner)), mask: s.mask}
	// Translate old owner indexes to new ones (-1: removed or none).
	remap := make([]int32, len(s.nodes))
	for i, nd := range s.nodes {
		remap[i] = -1
		if j, ok := indexOf(nodes, nd.ID); ok {
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
		return next.link(), movesBetween(s, next), nil
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
	return next.link(), movesBetween(s, next), nil
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
