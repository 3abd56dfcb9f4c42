package bounded

import (
	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// Locate returns the node that owns key on the plain ring, ignoring loads:
// the first candidate of the bounded walk. Use [Ring.Acquire] to place a
// request within the load bounds. The error is [kolco.ErrNoNodes] when the
// ring has no nodes.
func (r *Ring) Locate(key string) (kolco.Node, error) {
	s := r.cur.Load()
	if len(s.nodes) == 0 {
		return kolco.Node{}, kolco.ErrNoNodes
	}
	return s.nodes[s.owner[s.search(r.cfg.Hash(key))]], nil
}

// LocateN appends up to n distinct owners of key to dst, in the order the
// bounded walk considers them (the plain ring's replicas), ignoring loads.
// The error is [kolco.ErrBadCount] when n < 1 and [kolco.ErrNoNodes] when
// the ring has no nodes.
func (r *Ring) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	if n < 1 {
		return dst, kolco.ErrBadCount
	}
	s := r.cur.Load()
	if len(s.nodes) == 0 {
		return dst, kolco.ErrNoNodes
	}
	n = min(n, len(s.nodes))
	start := len(dst)
	p := s.search(r.cfg.Hash(key))
	for range s.points {
		if len(dst)-start == n {
			return dst, nil
		}
		dst = nodeset.AppendNew(dst, start, s.nodes[s.owner[p]])
		if p++; p == len(s.points) {
			p = 0
		}
	}
	return dst, nil
}
