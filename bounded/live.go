package bounded

import (
	"sync/atomic"

	"github.com/kolco-dev/kolco"
)

// Lease is one request placed by [Ring.Acquire]. Call Release exactly once
// when the request ends.
type Lease struct {
	// Node is the node the request was placed on.
	Node  kolco.Node
	load  *atomic.Int64
	total *atomic.Int64
}

// Release ends the request, freeing its place on Node. Releasing the zero
// Lease does nothing; releasing a lease twice corrupts the load counts.
func (l Lease) Release() {
	if l.load == nil {
		return
	}
	l.load.Add(-1)
	l.total.Add(-1)
}

// Acquire places one live request for key: it walks the ring from key's
// hash and takes the first node whose requests in flight are below its
// capacity ceil((1+ε) * L * w / W), L being the requests in flight
// including this one. A key with 30% of all traffic thus fills its node to
// the bound and overflows to the next nodes on the ring instead of sinking
// it. Load is counted atomically; under sequential use no node ever holds
// more than its capacity, and concurrent Acquires can exceed it only when
// they race past a full walk (then the request goes to the first
// candidate). Acquire does not allocate. The error is [kolco.ErrNoNodes]
// when the ring has no nodes.
func (r *Ring) Acquire(key string) (Lease, error) {
	s := r.cur.Load()
	if s.snap.Len() == 0 {
		return Lease{}, kolco.ErrNoNodes
	}
	total := r.total.Add(1)
	start := s.snap.Successor(r.ring.Hash(key))
	for attempt := 0; attempt < 2; attempt++ {
		p := start
		for range s.snap.Points() {
			o := s.snap.Owner(p)
			if s.tryTake(o, s.capacity(r.eps, o, total)) {
				return Lease{Node: s.snap.Node(o), load: s.load[o], total: &r.total}, nil
			}
			if p++; p == s.snap.Points() {
				p = 0
			}
		}
		total = r.total.Load() // others may have raised the total meanwhile
	}
	o := s.snap.Owner(start)
	s.load[o].Add(1)
	return Lease{Node: s.snap.Node(o), load: s.load[o], total: &r.total}, nil
}

// tryTake increments node o's load if it is below capacity.
func (s *state) tryTake(o int, capacity int64) bool {
	for {
		l := s.load[o].Load()
		if l >= capacity {
			return false
		}
		if s.load[o].CompareAndSwap(l, l+1) {
			return true
		}
	}
}

// InFlight returns the number of requests in flight (acquired and not yet
// released), over all nodes including removed ones.
func (r *Ring) InFlight() int64 { return r.total.Load() }

// Loads returns the requests in flight on each node, by node ID.
func (r *Ring) Loads() map[string]int64 {
	s := r.cur.Load()
	out := make(map[string]int64, len(s.load))
	for i, l := range s.load {
		out[s.snap.Node(i).ID] = l.Load()
	}
	return out
}

// Capacity returns the most requests node id may hold while inflight
// requests are in flight: ceil((1+ε) * inflight * w / W). The error wraps
// [kolco.ErrUnknownNode].
func (r *Ring) Capacity(id string, inflight int64) (int64, error) {
	s := r.cur.Load()
	i, ok := s.snap.Index(id)
	if !ok {
		return 0, kolco.ErrUnknownNode
	}
	return s.capacity(r.eps, i, inflight), nil
}
