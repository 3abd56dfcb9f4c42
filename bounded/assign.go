package bounded

import (
	"fmt"
	"slices"

	"github.com/kolco-dev/kolco"
)

// Assignment is the result of [Ring.Assign].
type Assignment struct {
	// Nodes is the node set the keys were placed on, sorted by ID.
	Nodes []kolco.Node
	// Owner[i] is the index in Nodes of the node that keys[i] went to.
	Owner []int
	// Load[j] is the number of keys placed on Nodes[j].
	Load []int
	// Capacity[j] is ceil((1+ε) * len(keys) * w_j / W), the most keys
	// Nodes[j] may take; Load[j] <= Capacity[j] always holds.
	Capacity []int
}

// Assign places keys, in the order given, with the paper's static
// allocation: each key walks the ring from its hash and goes to the first
// node that holds fewer keys than its capacity. Every node ends at or under
// its capacity. The result depends on the order of keys (an earlier key
// takes a place first) but not on the ring's live loads. The error is
// [kolco.ErrNoNodes] when the ring has no nodes and keys is not empty.
func (r *Ring) Assign(keys []string) (Assignment, error) {
	s := r.cur.Load()
	a := Assignment{
		Nodes:    slices.Clone(s.nodes),
		Owner:    make([]int, len(keys)),
		Load:     make([]int, len(s.nodes)),
		Capacity: make([]int, len(s.nodes)),
	}
	if len(keys) == 0 {
		return a, nil
	}
	if len(s.nodes) == 0 {
		return a, fmt.Errorf("bounded: assign %d keys: %w", len(keys), kolco.ErrNoNodes)
	}
	for j := range s.nodes {
		a.Capacity[j] = int(s.capacity(r.cfg.Epsilon, j, int64(len(keys))))
	}
	for i, key := range keys {
		a.Owner[i] = s.walk(s.search(r.cfg.Hash(key)), func(j int) bool { return a.Load[j] < a.Capacity[j] })
		a.Load[a.Owner[i]]++
	}
	return a, nil
}

// walk returns the owner of the first point from p on (wrapping) for which
// fits holds. The capacities sum to at least (1+ε) times the load, so some
// node always fits; should rounding ever leave none, the first candidate is
// returned rather than looping.
func (s *state) walk(p int, fits func(node int) bool) int {
	for range s.points {
		if o := int(s.owner[p]); fits(o) {
			return o
		}
		if p++; p == len(s.points) {
			p = 0
		}
	}
	return int(s.owner[p])
}
