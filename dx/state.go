package dx

import (
	"fmt"
	"math"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// Lookups depend on the capacity, the node on each slot and the top
// weight; later adds also on the order of the freed slots. The state
// written down is all four; the identity only the first three, so that
// two placements that place every key alike have one fingerprint.

// MarshalState returns the state that decides placement besides the node
// set, in a canonical, versioned encoding that [Restore] reads: the
// capacity, the top weight, the inactive slots in the order the next adds
// take them last, and the node on each active slot.
func (p *Placement) MarshalState() []byte { return p.m.Load().marshal() }

func (s *state) marshal() []byte {
	w := nodeset.StateWriter("dx")
	w.Uint(uint64(len(s.slot)))
	w.Float(s.top)
	w.Uint(uint64(len(s.free)))
	for _, b := range s.free {
		w.Uint(uint64(b))
	}
	for _, id := range s.ids {
		if id != "" {
			w.String(id)
		}
	}
	return w.B
}

// Restore returns the placement over nodes in the state that
// [Placement.MarshalState] wrote, in this process or another: it places
// every key as the placement that wrote the state, and changes as it
// would. The capacity comes from the state; cfg.Capacity must be zero or
// equal to it. An empty state gives the placement of [New]. The error
// wraps [kolco.ErrBadState] for a state that is not one of dx's over these
// nodes or disagrees with cfg.Capacity, or is an error of New.
func Restore(nodes []kolco.Node, cfg Config, data []byte) (*Placement, error) {
	if len(data) == 0 {
		return New(nodes, cfg)
	}
	capacity, err := nodeset.StateCapacity("dx", data, cfg.Capacity, len(nodes), func(c uint64) bool { return c >= 1 && c <= MaxCapacity && c&(c-1) == 0 })
	if err != nil {
		return nil, fmt.Errorf("dx: %w", err)
	}
	// New validates the nodes; its state is then replaced.
	cfg.Capacity = capacity
	p, err := New(nodes, cfg)
	if err != nil {
		return nil, err
	}
	if err := p.m.Restore(data, unmarshal, (*state).marshal); err != nil {
		return nil, err
	}
	return p, nil
}

// unmarshal reads a state of set.
func unmarshal(data []byte, set nodeset.Set) (*state, error) {
	r, err := nodeset.StateReader("dx", data)
	if err != nil {
		return nil, err
	}
	capacity := int(r.Uint()) // within bounds: see nodeset.StateCapacity
	s := &state{ids: make([]string, capacity), top: math.Float64frombits(r.Uint())}
	if !(s.top >= 1) || math.IsInf(s.top, 0) {
		return nil, fmt.Errorf("%w: top weight %v", kolco.ErrBadState, s.top)
	}
	inactive := make([]bool, capacity)
	for range r.Count(1) {
		b := r.Uint()
		if b >= uint64(capacity) || inactive[b] {
			return nil, fmt.Errorf("%w: inactive slot %d out of range or listed twice", kolco.ErrBadState, b)
		}
		inactive[b] = true
		s.free = append(s.free, int32(b))
	}
	var ids []string
	for b := range capacity {
		if !inactive[b] {
			s.ids[b] = r.String()
			ids = append(ids, s.ids[b])
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	if err := nodeset.CheckIDs(ids, set); err != nil {
		return nil, err
	}
	for _, n := range set.View() {
		if n.EffectiveWeight() > s.top {
			return nil, fmt.Errorf("%w: node %q weighs %v, above the top weight %v", kolco.ErrBadState, n.ID, n.EffectiveWeight(), s.top)
		}
	}
	s.index(set)
	return s, nil
}

// AppendIdentity appends the placement's identity for kolco.Fingerprint:
// the key hash by name, the capacity, and each slot's node and acceptance
// threshold. The error wraps [kolco.ErrBadConfig] for a key hash that
// keyhash does not name.
func (p *Placement) AppendIdentity(dst []byte) ([]byte, error) {
	s := p.m.Load()
	return nodeset.Identity(dst, "dx", s.nodes, func(w *nodeset.Writer) error {
		if err := w.HashName("dx", p.named); err != nil {
			return err
		}
		w.Uint(uint64(len(s.slot)))
		for b, id := range s.ids {
			w.String(id)
			if id != "" {
				t := uint64(always)
				if s.accept != nil {
					t = s.accept[b]
				}
				w.Uint(t)
			}
		}
		return nil
	})
}
