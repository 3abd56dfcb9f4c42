package bounded

import (
	"fmt"

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
	n := s.snap.Len()
	a := Assignment{
		Nodes:    make([]kolco.Node, n),
		Owner:    make([]int, len(keys)),
		Load:     make([]int, n),
		Capacity: make([]int, n),
	}
	if len(keys) == 0 {
		for j := range n {
			a.Nodes[j] = s.snap.Node(j)
		}
		return a, nil
	}
	if n == 0 {
		return a, fmt.Errorf("bounded: assign %d keys: %w", len(keys), kolco.ErrNoNodes)
	}
	for j := range n {
		a.Nodes[j] = s.snap.Node(j)
		a.Capacity[j] = int(s.capacity(r.eps, j, int64(len(keys))))
	}
	for i, key := range keys {
		a.Owner[i] = s.walk(s.snap.Successor(r.ring.Hash(key)), func(j int) bool { return a.Load[j] < a.Capacity[j] })
		a.Load[a.Owner[i]]++
	}
	return a, nil
}
