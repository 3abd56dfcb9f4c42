package slots

import "github.com/kolco-dev/kolco"

// targets apportions count slots among nodes (sorted by ID) by weight with
// the Sainte-Laguë (Webster) divisor method: slots are handed out one at a
// time to the node with the highest priority weight/(held+0.5), ties to the
// lower ID.
//
// A divisor method rather than largest remainders (Hamilton), because a
// divisor method never gives an existing node more slots when a node joins
// or another's weight grows: without that, an Add could move slots between
// old nodes, and the rebalance would no longer move keys only onto the new
// node. Each node's share is within about one slot of its exact quota.
func targets(nodes []kolco.Node, count int) []int {
	h := seatHeap{held: make([]int, len(nodes)), w: make([]float64, len(nodes))}
	for i, nd := range nodes {
		h.w[i] = nd.EffectiveWeight()
		h.idx = append(h.idx, i)
	}
	for i := len(h.idx)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	for range count {
		top := h.idx[0]
		h.held[top]++
		h.down(0)
	}
	return h.held
}

// seatHeap is a max-heap of node indexes by priority w/(held+0.5). It is
// written out because container/heap would box every index in an interface.
type seatHeap struct {
	idx  []int
	held []int
	w    []float64
}

func (h *seatHeap) prio(i int) float64 { return h.w[i] / (float64(h.held[i]) + 0.5) }

// before reports whether node a is served before node b.
func (h *seatHeap) before(a, b int) bool {
	pa, pb := h.prio(a), h.prio(b)
	if pa != pb {
		return pa > pb
	}
	return a < b
}

func (h *seatHeap) down(i int) {
	n := len(h.idx)
	for {
		best := i
		for _, c := range [2]int{2*i + 1, 2*i + 2} {
			if c < n && h.before(h.idx[c], h.idx[best]) {
				best = c
			}
		}
		if best == i {
			return
		}
		h.idx[i], h.idx[best] = h.idx[best], h.idx[i]
		i = best
	}
}
