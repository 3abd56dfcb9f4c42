package dx

import (
	"github.com/kolco-dev/kolco"
)

// probes bounds a key's sequence at 4 x Capacity slots, as the authors'
// code does. With a quarter of the slots working a key runs past it with
// probability below e^-Capacity; short cycles of the generator are the
// likelier cause, and rare.
const probes = 4

// find returns the slot of the key with hash kh, skipping the slots of the
// chosen nodes as if they were inactive. The caller ensures that at least
// one active slot's node is not chosen.
//
// The sequence is DxHash's: the second seed is the key's low 32 bits times
// 421757 plus one, the first value the generator step of the key hash from
// it, each next value the step of the previous one, and the slot of a
// value its low bits. The first active slot of the sequence is the key's,
// unless its node weighs less than the top weight: then the next value is
// a draw that accepts it with probability weight/top, and the sequence
// goes on after a rejection.
func (s *state) find(kh uint64, chosen []kolco.Node) int {
	mask := uint32(len(s.slot) - 1)
	seed := uint32(kh)*421757 + 1
	v := crc32c(seed, kh)
	for range probes * len(s.slot) {
		b := int(v & mask)
		if s.open(b, chosen) {
			if s.accept == nil || s.accept[b] == always {
				return b
			}
			v = crc32c(seed, uint64(v))
			if uint64(v) < s.accept[b] {
				return b
			}
		}
		v = crc32c(seed, uint64(v))
	}
	// The sequence cycled, or ran past the bound, without a working slot:
	// the first open slot from the last one probed takes the key, which
	// keeps minimal disruption (an add or removal changes the answer only
	// to or from the changed slot).
	for i := range len(s.slot) {
		if b := int((v + uint32(i)) & mask); s.open(b, chosen) {
			return b
		}
	}
	return 0
}

// open reports whether slot b is active and its node not chosen.
func (s *state) open(b int, chosen []kolco.Node) bool {
	i := s.slot[b]
	if i < 0 {
		return false
	}
	for j := range chosen {
		if chosen[j].ID == s.nodes[i].ID {
			return false
		}
	}
	return true
}

// Locate returns the node that owns key. The error is kolco.ErrNoNodes
// when the placement has no nodes.
func (p *Placement) Locate(key string) (*kolco.Node, error) {
	if n, _ := p.owner(key); n != nil {
		return n, nil
	}
	return nil, kolco.ErrNoNodes
}

// LocateID returns the ID of the node Locate returns. The error is
// kolco.ErrNoNodes when the placement has no nodes.
func (p *Placement) LocateID(key string) (string, error) {
	if n, _ := p.owner(key); n != nil {
		return n.ID, nil
	}
	return "", kolco.ErrNoNodes
}

// LocateIndex returns the position in Nodes of the node Locate returns.
// The error is kolco.ErrNoNodes, with -1, when the placement has no nodes.
func (p *Placement) LocateIndex(key string) (int, error) {
	if _, i := p.owner(key); i >= 0 {
		return i, nil
	}
	return -1, kolco.ErrNoNodes
}

// owner returns the owner of key in the current state and its index in the
// state's node set, or nil and -1 without nodes.
func (p *Placement) owner(key string) (*kolco.Node, int) {
	s := p.m.Load()
	if len(s.nodes) == 0 {
		return nil, -1
	}
	i := int(s.slot[s.first(p.hash(key))])
	return &s.nodes[i], i
}

// LocateN appends up to n distinct owners of key to dst: the owner, then
// the node the key would go to if the owner were removed, and so on (the
// key's sequence goes on, skipping the owners found). The error is
// [kolco.ErrBadCount] when n < 1 and [kolco.ErrNoNodes] when there are no
// nodes.
func (p *Placement) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	if n < 1 {
		return dst, kolco.ErrBadCount
	}
	s := p.m.Load()
	if len(s.nodes) == 0 {
		return dst, kolco.ErrNoNodes
	}
	kh := p.hash(key)
	start := len(dst)
	for range min(n, len(s.nodes)) {
		dst = append(dst, s.nodes[s.slot[s.find(kh, dst[start:])]])
	}
	return dst, nil
}
