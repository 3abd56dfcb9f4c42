package memento

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// The state that decides placement, besides the node set, is the bucket
// array: its size, the node on each working bucket and the removed
// buckets with their replacers and the order of removal. Only the order
// needs writing: adds always restore the most recently removed bucket, so
// the removed buckets form a stack, and the bucket at depth i from the
// bottom was removed while size-i buckets worked, which makes its replacer
// size-i-1 and its predecessor the bucket below it.

// MarshalState returns the canonical encoding of the bucket array: its
// size, the removed buckets from the first removed to the last, and the ID
// on each working bucket in bucket order.
func (p *Placement) MarshalState() []byte { return p.m.Load().marshal(p.m.Name) }

func (s *state) marshal(name string) []byte {
	w := nodeset.StateWriter(name)
	w.Uint(uint64(len(s.ids)))
	stack := s.stack()
	w.Uint(uint64(len(stack)))
	for _, b := range stack {
		w.Uint(uint64(b))
	}
	for b, id := range s.ids {
		if s.rep[b] == 0 {
			w.String(id)
		}
	}
	return w.B
}

// stack returns the removed buckets, the first removed first.
func (s *state) stack() []int32 {
	var out []int32
	for b := s.last; int(b) != len(s.ids); b = s.prev[b] {
		out = append(out, b)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// Restore returns the placement of spec over nodes in the state data, as
// MarshalState wrote it; empty data gives the placement of New. The error
// wraps kolco.ErrBadState for data that is not such a state of these
// nodes, or is an error of New.
func Restore(spec Spec, nodes []kolco.Node, data []byte) (*Placement, error) {
	p, err := New(spec, nodes)
	if err != nil || len(data) == 0 {
		return p, err
	}
	read := func(data []byte, set nodeset.Set) (*state, error) { return unmarshal(spec.Name, data, set) }
	if err := p.m.Restore(data, read, func(s *state) []byte { return s.marshal(spec.Name) }); err != nil {
		return nil, err
	}
	return p, nil
}

// unmarshal reads a state of set.
func unmarshal(name string, data []byte, set nodeset.Set) (*state, error) {
	r, err := nodeset.StateReader(name, data)
	if err != nil {
		return nil, err
	}
	// Each bucket takes at least one byte, a removed one's number or a
	// working one's ID, which bounds the size by the input's.
	size := r.Uint()
	if size > uint64(len(data)) {
		return nil, fmt.Errorf("%w: %d buckets in %d bytes", kolco.ErrBadState, size, len(data))
	}
	s := &state{ids: make([]string, size), rep: make([]int32, size), prev: make([]int32, size), last: int32(size)}
	stack := make([]int32, r.Count(1))
	for i := range stack {
		b := r.Uint()
		if b >= size || s.rep[b] != 0 {
			return nil, fmt.Errorf("%w: removed bucket %d out of range or listed twice", kolco.ErrBadState, b)
		}
		stack[i] = int32(b)
		s.rep[b] = int32(size) - int32(i)
		s.prev[b], s.last = s.last, int32(b)
	}
	s.working = int(size) - len(stack)
	var ids []string
	for b := range s.ids {
		if s.rep[b] == 0 {
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

// AppendIdentity appends the placement's identity: the key hash by name
// and the bucket array as MarshalState writes it. The error wraps
// kolco.ErrBadConfig for a key hash that keyhash does not name.
func (p *Placement) AppendIdentity(dst []byte) ([]byte, error) {
	s := p.m.Load()
	return nodeset.Identity(dst, p.m.Name, s.nodes, func(w *nodeset.Writer) error {
		if err := w.HashName(p.m.Name, p.named); err != nil {
			return err
		}
		w.String(string(s.marshal(p.m.Name)))
		return nil
	})
}
