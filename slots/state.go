package slots

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// MarshalState returns the slot table, the state that decides placement
// besides the node set, in a canonical, versioned encoding that [Restore]
// reads: the slot count, the node IDs in ID order and the table as runs of
// slots with one owner.
func (m *Map) MarshalState() []byte {
	w := nodeset.StateWriter("slots")
	m.m.Load().write(w)
	return w.B
}

// write writes the slot count, the node IDs and the runs of the table,
// each as its length and its owner's index among the IDs.
func (s *state) write(w *nodeset.Writer) {
	w.Uint(uint64(len(s.owner)))
	w.IDs(s.nodes)
	var lens, owners []int
	for slot, o := range s.owner {
		if o < 0 { // no nodes: no owner, no runs
			break
		}
		if slot > 0 && o == s.owner[slot-1] {
			lens[len(lens)-1]++
			continue
		}
		lens, owners = append(lens, 1), append(owners, int(o))
	}
	w.Uint(uint64(len(lens)))
	for i := range lens {
		w.Uint(uint64(lens[i]))
		w.Uint(uint64(owners[i]))
	}
}

// Restore returns the map over nodes with the slot table that
// [Map.MarshalState] wrote, in this process or another: it places every
// key as the map that wrote the table, and changes as it would. The slot
// count comes from the state; cfg.Count must be zero or equal to it. An
// empty state gives the map of [New]. The error wraps [kolco.ErrBadState]
// for a state that is not a slot table over these nodes or disagrees with
// cfg.Count, or is an error of New.
func Restore(nodes []kolco.Node, cfg Config, state []byte) (*Map, error) {
	if len(state) == 0 {
		return New(nodes, cfg)
	}
	set, err := nodeset.New(nodes)
	if err != nil {
		return nil, fmt.Errorf("slots: %w", err)
	}
	s, err := unmarshal(state, set)
	if err == nil && cfg.Count != 0 && cfg.Count != len(s.owner) {
		err = fmt.Errorf("%w: %d slots, configured %d", kolco.ErrBadState, len(s.owner), cfg.Count)
	}
	if err == nil {
		w := nodeset.StateWriter("slots")
		s.write(w)
		err = nodeset.CheckCanonical(state, w.B)
	}
	if err != nil {
		return nil, fmt.Errorf("slots: %w", err)
	}
	m := newMap(cfg.Hash)
	m.m.Store(s.link())
	return m, nil
}

// unmarshal reads a slot table over set.
func unmarshal(data []byte, set nodeset.Set) (*state, error) {
	r, err := nodeset.StateReader("slots", data)
	if err != nil {
		return nil, err
	}
	count := r.Uint()
	if _, err := (Config{Count: int(min(count, MaxCount+1))}).count(); err != nil || count == 0 {
		return nil, fmt.Errorf("%w: slot count %d", kolco.ErrBadState, count)
	}
	ids := make([]string, r.Count(1))
	for i := range ids {
		ids[i] = r.String()
	}
	if !r.Ok() {
		return nil, r.Err()
	}
	if err := nodeset.CheckIDs(ids, set); err != nil {
		return nil, err
	}
	s := emptyState(int(count))
	s.set, s.nodes = set, set.View()
	slot := 0
	for range r.Count(2) {
		n, o := r.Uint(), r.Uint()
		if n == 0 || n > count-uint64(slot) || o >= uint64(len(ids)) {
			return nil, fmt.Errorf("%w: a run of %d slots at %d owned by node %d", kolco.ErrBadState, n, slot, o)
		}
		i, _ := set.Index(ids[o])
		for range n {
			s.owner[slot] = int32(i)
			slot++
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	if len(ids) > 0 && slot != int(count) {
		return nil, fmt.Errorf("%w: runs cover %d of %d slots", kolco.ErrBadState, slot, count)
	}
	return s, nil
}

// AppendIdentity appends the map's identity for kolco.Fingerprint: the
// key hash ("crc16" or the name of [Config.Hash]), the slot table and the
// node IDs (a node owning no slot still comes last in LocateN). Weights
// are left out: they decide only how a later change moves slots. The
// error wraps [kolco.ErrBadConfig] for a hash that keyhash does not name.
func (m *Map) AppendIdentity(dst []byte) ([]byte, error) {
	s := m.m.Load()
	return nodeset.Identity(dst, "slots", s.nodes, func(w *nodeset.Writer) error {
		if m.named == nil {
			w.String("crc16")
		} else if err := w.HashName("slots", m.named); err != nil {
			return err
		}
		s.write(w)
		return nil
	})
}
