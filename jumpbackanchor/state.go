package jumpbackanchor

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// The state that decides placement, besides the node set, is what hash4j's
// getState writes - the number of buckets and the removed buckets in the
// order of their removal, from which every entry follows by replaying the
// removals - and the node on each working bucket.

// MarshalState returns the canonical encoding of the bucket set: its
// size, the removed buckets from the first removed to the last, and the
// ID on each working bucket in bucket order.
func (p *Placement) MarshalState() []byte { return p.m.Load().marshal() }

func (s *state) marshal() []byte {
	w := nodeset.StateWriter("jumpbackanchor")
	w.Uint(uint64(s.size))
	w.Uint(uint64(len(s.removed)))
	for _, b := range s.removed {
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
// MarshalState wrote, in this process or another: it places every key as
// the placement that wrote the state, and changes as it would. An empty
// state gives the placement of [New]. The error wraps kolco.ErrBadState
// for a state that is not one of jumpbackanchor's over these nodes, or is
// an error of New.
func Restore(nodes []kolco.Node, cfg Config, data []byte) (*Placement, error) {
	p := newEmpty(cfg)
	if err := p.m.Init(&state{}, nodes); err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return p, nil
	}
	if err := p.m.Restore(data, unmarshal, (*state).marshal); err != nil {
		return nil, err
	}
	return p, nil
}

// unmarshal reads a state of set, replaying its removals to rebuild the
// entries as hash4j's setState does.
func unmarshal(data []byte, set nodeset.Set) (*state, error) {
	r, err := nodeset.StateReader("jumpbackanchor", data)
	if err != nil {
		return nil, err
	}
	// Each bucket takes at least one byte, a removed one's number or a
	// working one's ID, which bounds the size by the input's.
	size := r.Uint()
	if size > uint64(len(data)) || size > 1<<31-1 {
		return nil, fmt.Errorf("%w: %d buckets in %d bytes", kolco.ErrBadState, size, len(data))
	}
	s := &state{buckets: buckets{size: int(size)}, ids: make([]string, size)}
	stack := r.Count(1)
	if stack > 0 && stack >= int(size) {
		// Removing the last working bucket empties the set instead.
		return nil, fmt.Errorf("%w: all %d buckets removed", kolco.ErrBadState, size)
	}
	if stack > 0 {
		s.ka = make([]entry, size)
	}
	gone := make([]bool, size)
	for i := range stack {
		b := r.Uint()
		if !r.Ok() {
			break
		}
		if b >= size || gone[b] {
			return nil, fmt.Errorf("%w: removed bucket %d out of range or listed twice", kolco.ErrBadState, b)
		}
		gone[b] = true
		s.removed = append(s.removed, int32(b))
		n := int(size) - 1 - i
		h := s.view(n, uint32(n)+1)
		s.ka[b] = entry{a: uint32(n), dk: int32(h - int(b))}
	}
	var ids []string
	for b := range s.ids {
		if !gone[b] {
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
	s.reindex(set)
	return s, nil
}

// AppendIdentity appends the placement's identity for kolco.Fingerprint:
// the key hash by name and the state as MarshalState writes it. The error
// wraps kolco.ErrBadConfig for a key hash that keyhash does not name.
func (p *Placement) AppendIdentity(dst []byte) ([]byte, error) {
	s := p.m.Load()
	return nodeset.Identity(dst, "jumpbackanchor", s.nodes, func(w *nodeset.Writer) error {
		if err := w.HashName("jumpbackanchor", p.hash); err != nil {
			return err
		}
		w.String(string(s.marshal()))
		return nil
	})
}
