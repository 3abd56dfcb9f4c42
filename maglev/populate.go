package maglev

import (
	"math"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
)

// permutation returns where node id's preference list starts and its step:
// entry j of the list is (offset + j*skip) mod size, a permutation of the
// table because size is prime and 1 <= skip < size (the paper, section 3.4).
func permutation(id string, size int) (offset, skip uint64) {
	m := uint64(size)
	offset = keyhash.XXH3(id) % m
	skip = 1
	if m > 1 {
		skip = keyhash.XXH64(id)%(m-1) + 1
	}
	return offset, skip
}

// turn returns the round in which a node whose weight is 1/ratio of the
// largest takes its j-th entry (counting from 0): floor(j*ratio). A node of
// the largest weight takes one entry every round, one of half that weight
// every other round. This is the paper's population loop with weighted
// turns; equal weights give exactly the paper's loop.
func turn(j int, ratio float64) float64 { return math.Floor(float64(j) * ratio) }

// populate fills a table of size entries (Maglev's Algorithm 1 with weighted
// turns): in each round, nodes in ID order whose turn it is take the next
// entry of their permutation that is still free, until every entry is
// taken. A heap of next turns replaces the round-by-round scan so that
// nodes of tiny weight cost nothing while they wait.
func populate(nodes []kolco.Node, size int) []int32 {
	if len(nodes) == 0 {
		return nil
	}
	entry := make([]int32, size)
	for i := range entry {
		entry[i] = -1
	}
	wmax := 0.0
	for _, nd := range nodes {
		wmax = max(wmax, nd.EffectiveWeight())
	}
	h := turnHeap{items: make([]turnItem, len(nodes))}
	pos := make([]uint64, len(nodes))
	skip := make([]uint64, len(nodes))
	for i, nd := range nodes {
		pos[i], skip[i] = permutation(nd.ID, size)
		h.items[i] = turnItem{at: 0, node: int32(i), ratio: wmax / nd.EffectiveWeight()}
	}
	m := uint64(size)
	for filled := 0; filled < size; filled++ {
		it := &h.items[0]
		i := it.node
		for entry[pos[i]] >= 0 {
			pos[i] = (pos[i] + skip[i]) % m
		}
		entry[pos[i]] = i
		pos[i] = (pos[i] + skip[i]) % m
		it.taken++
		it.at = turn(it.taken, it.ratio)
		h.down(0)
	}
	return entry
}

// turnItem is a node waiting for its next turn.
type turnItem struct {
	at    float64 // round of the next turn
	ratio float64 // largest weight / this node's weight
	taken int
	node  int32
}

// turnHeap orders nodes by (round of next turn, ID order), the order in
// which the round-by-round loop would serve them.
type turnHeap struct{ items []turnItem }

func (h *turnHeap) less(a, b int) bool {
	x, y := &h.items[a], &h.items[b]
	if x.at != y.at {
		return x.at < y.at
	}
	return x.node < y.node
}

func (h *turnHeap) down(i int) {
	n := len(h.items)
	for {
		best := i
		if l := 2*i + 1; l < n && h.less(l, best) {
			best = l
		}
		if r := 2*i + 2; r < n && h.less(r, best) {
			best = r
		}
		if best == i {
			return
		}
		h.items[i], h.items[best] = h.items[best], h.items[i]
		i = best
	}
}
