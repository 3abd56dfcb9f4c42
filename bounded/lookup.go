package bounded

import "github.com/kolco-dev/kolco"

// Locate returns the node that owns key on the plain ring, ignoring loads:
// the first candidate of the bounded walk. Use [Ring.Acquire] to place a
// request within the load bounds. The error is [kolco.ErrNoNodes] when the
// ring has no nodes.
func (r *Ring) Locate(key string) (*kolco.Node, error) { return r.ring.Locate(key) }

// LocateID returns the ID of the node Locate returns. The error is
// [kolco.ErrNoNodes] when the ring has no nodes.
func (r *Ring) LocateID(key string) (string, error) { return r.ring.LocateID(key) }

// LocateIndex returns the position in [Ring.Nodes] of the node Locate
// returns. The error is [kolco.ErrNoNodes], with -1, when the ring has no
// nodes.
func (r *Ring) LocateIndex(key string) (int, error) { return r.ring.LocateIndex(key) }

// LocateN appends up to n distinct owners of key to dst, in the order the
// bounded walk considers them (the plain ring's replicas), ignoring loads.
// The error is [kolco.ErrBadCount] when n < 1 and [kolco.ErrNoNodes] when
// the ring has no nodes.
func (r *Ring) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	return r.ring.LocateN(dst, key, n)
}

// walk returns the owner of the first point from p on (wrapping) for which
// fits holds. The capacities sum to at least (1+ε) times the load, so some
// node always fits; should rounding ever leave none, the first candidate is
// returned rather than looping.
func (s *state) walk(p int, fits func(node int) bool) int {
	for range s.snap.Points() {
		if o := s.snap.Owner(p); fits(o) {
			return o
		}
		if p++; p == s.snap.Points() {
			p = 0
		}
	}
	return s.snap.Owner(p)
}
