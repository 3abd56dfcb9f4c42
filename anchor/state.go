package anchor

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// The whole AnchorHash state follows from the capacity and the stack R of
// removed buckets: the anchor of New is the all-working anchor with buckets
// capacity-1 down to len(nodes) removed in that order (what the paper's
// INITANCHOR builds), and an add undoes the most recent removal exactly,
// restoring A, K, W and L as they were. So the state written down is the
// capacity, R from bottom to top and the node on each working bucket, and
// a restore replays the removals on an all-working anchor.

// MarshalState returns the state that decides placement besides the node
// set, in a canonical, versioned encoding that [Restore] reads: the
// capacity, the removed buckets in the order of their removal and the node
// on each working bucket.
func (h *Placement) MarshalState() []byte { return h.m.Load().marshal() }

func (s *state) marshal() []byte {
	w := nodeset.StateWriter("anchor")
	w.Uint(uint64(len(s.a)))
	w.Uint(uint64(len(s.r)))
	for _, b := range s.r {
		w.Uint(uint64(b))
	}
	for _, i := range s.byBucket {
		if i >= 0 {
			w.String(s.nodes[i].ID)
		}
	}
	return w.B
}

// Restore returns the anchor over nodes in the state that
// [Placement.MarshalState] wrote, in this process or another: it places every
// key as the anchor that wrote the state, and changes as it would. The
// capacity comes from the state; cfg.Capacity must be zero or equal to
// it. An empty state gives the anchor of [New]. The error wraps
// [kolco.ErrBadState] for a state that is not an anchor's over these nodes
// or disagrees with cfg.Capacity, or is an error of New.
func Restore(nodes []kolco.Node, cfg Config, data []byte) (*Placement, error) {
	if len(data) == 0 {
		return New(nodes, cfg)
	}
	capacity, err := nodeset.StateCapacity("anchor", data, cfg.Capacity, len(nodes), func(c uint64) bool { return c >= 1 && c <= MaxCapacity })
	if err != nil {
		return nil, fmt.Errorf("anchor: %w", err)
	}
	// New validates the nodes; its state is then replaced.
	cfg.Capacity = capacity
	h, err := New(nodes, cfg)
	if err != nil {
		return nil, err
	}
	if err := h.m.Restore(data, unmarshal, (*state).marshal); err != nil {
		return nil, err
	}
	return h, nil
}

// unmarshal reads a state of set: an all-working anchor of the state's
// capacity with the state's removals replayed in order.
func unmarshal(data []byte, set nodeset.Set) (*state, error) {
	r, err := nodeset.StateReader("anchor", data)
	if err != nil {
		return nil, err
	}
	capacity := int(r.Uint()) // within bounds: see nodeset.StateCapacity
	s := emptyState(capacity)
	s.r, s.n = s.r[:0], uint32(capacity)
	clear(s.a)
	removed := make([]bool, capacity)
	for range r.Count(1) {
		b := r.Uint()
		if b >= uint64(capacity) || removed[b] {
			return nil, fmt.Errorf("%w: removed bucket %d out of range or listed twice", kolco.ErrBadState, b)
		}
		removed[b] = true
		s.removeBucket(uint32(b))
	}
	var ids []string
	for b := range capacity {
		if !removed[b] {
			id := r.String()
			ids = append(ids, id)
			s.bucket[id] = uint32(b)
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	if err := nodeset.CheckIDs(ids, set); err != nil {
		return nil, err
	}
	s.set, s.nodes = set, set.View()
	s.reindex()
	return s, nil
}

// AppendIdentity appends the anchor's identity for kolco.Fingerprint: the
// key hash by name and the state. The error wraps [kolco.ErrBadConfig] for
// a key hash that keyhash does not name.
func (h *Placement) AppendIdentity(dst []byte) ([]byte, error) {
	s := h.m.Load()
	return nodeset.Identity(dst, "anchor", s.nodes, func(w *nodeset.Writer) error {
		if err := w.HashName("anchor", h.named); err != nil {
			return err
		}
		w.String(string(s.marshal()))
		return nil
	})
}
