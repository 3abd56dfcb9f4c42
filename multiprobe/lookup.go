package multiprobe

import (
	"fmt"

	"github.com/kolco-dev/kolco"
)

// successor returns the index of the first point at or after pos,
// wrapping to 0 past the last point.
func (s *snapshot) successor(pos uint64) int {
	j := int(s.index[pos>>s.shift])
	for j < len(s.points) && s.points[j] < pos {
		j++
	}
	if j == len(s.points) {
		return 0
	}
	return j
}

// winner returns the index of the point closest after any of the key's
// probes; on equal distances the earlier probe wins.
func (m *Ring) winner(s *snapshot, key string) int {
	kh := m.hash(key)
	best, bi := uint64(0), -1
	for i := range m.probes {
		p := spread(kh, i)
		j := s.successor(p)
		// Unsigned subtraction measures the clockwise distance, wrap
		// included.
		if d := s.points[j] - p; bi < 0 || d < best {
			best, bi = d, j
		}
	}
	return bi
}

// Locate returns the owner of key: the node whose point follows one of the
// key's probes most closely. The error is kolco.ErrNoNodes when the
// placement has no nodes.
func (m *Ring) Locate(key string) (*kolco.Node, error) {
	if n, _ := m.find(key); n != nil {
		return n, nil
	}
	return nil, kolco.ErrNoNodes
}

// LocateID returns the ID of the node Locate returns. The error is
// kolco.ErrNoNodes when the placement has no nodes.
func (m *Ring) LocateID(key string) (string, error) {
	if n, _ := m.find(key); n != nil {
		return n.ID, nil
	}
	return "", kolco.ErrNoNodes
}

// LocateIndex returns the position in Nodes of the node Locate returns.
// The error is kolco.ErrNoNodes, with -1, when the placement has no nodes.
func (m *Ring) LocateIndex(key string) (int, error) {
	if _, i := m.find(key); i >= 0 {
		return i, nil
	}
	return -1, kolco.ErrNoNodes
}

// find returns the owner of key in the current state and its index in
// the state's node set, or nil and -1 without nodes.
func (m *Ring) find(key string) (*kolco.Node, int) {
	s := m.m.Load()
	if len(s.points) == 0 {
		return nil, -1
	}
	i := int(s.owner[m.winner(s, key)])
	return &s.set.View()[i], i
}

// LocateN appends up to n distinct owners of key to dst: the owner, then
// the nodes of the following points clockwise from the owner's point,
// skipping nodes already chosen. When n exceeds the number of nodes every
// node is appended once. The error is kolco.ErrBadCount when n < 1 and
// kolco.ErrNoNodes without nodes.
func (m *Ring) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	if n < 1 {
		return dst, fmt.Errorf("%w (got %d)", kolco.ErrBadCount, n)
	}
	s := m.m.Load()
	if len(s.points) == 0 {
		return dst, kolco.ErrNoNodes
	}
	n = min(n, s.set.Len())
	start, w := len(dst), m.winner(s, key)
	for i := 0; i < len(s.points) && len(dst)-start < n; i++ {
		node := s.set.At(int(s.owner[(w+i)%len(s.points)]))
		if !chosen(dst[start:], node.ID) {
			dst = append(dst, node)
		}
	}
	return dst, nil
}

func chosen(nodes []kolco.Node, id string) bool {
	for i := range nodes {
		if nodes[i].ID == id {
			return true
		}
	}
	return false
}
