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
// taken. With equal weights that is plain round robin; otherwise a heap of
// next turns replaces the round-by-round scan so that nodes of tiny weight
// cost nothing while they wait.
func populate(nodes []kolco.Node, size int) []int32 {
	if len(nodes) == 0 {
		return nil
	}
	f := filler{entry: make([]int32, size), pos: make([]uint64, len(nodes)), skip: make([]uint64, len(nodes)), m: uint64(size)}
	for i := range f.entry {
		f.entry[i] = -1
	}
	wmax, equal := 0.0, true
	for i, nd := range nodes {
		f.pos[i], f.skip[i] = permutation(nd.ID, size)
		wmax = max(wmax, nd.EffectiveWeight())
		equal = equal && nd.EffectiveWeight() == nodes[0].EffectiveWeight()
	}
	if equal {
		for filled := 0; filled < size; filled++ {
			f.claim(int32(filled % len(nodes)))
		}
		return f.entry
	}
	h := turnHeap{items: make([]turnItem, len(nodes))}
	for i, nd := range nodes {
		h.items[i] = turnItem{at: 0, node: int32(i), ratio: wmax / nd.EffectiveWeight()}
	}
	for filled := 0; filled < size; filled++ {
		it := &h.items[0]
		f.claim(it.node)
		it.taken++
		it.at = turn(it.taken, it.ratio)
		h.down(0)
	}
	return f.entry
}

// filler is a table being filled and each node's place in its permutation.
type filler struct {
	entry     []int32
	pos, skip []uint64
	m         uint64
}

// claim gives node i the next free entry of its permutation.
func (f *filler) claim(i int32) {
	p, step := f.pos[i], f.skip[i]
	for f.entry[p] >= 0 {
		if p += step; p >= f.m { // p, step < m: one subtraction, no division
			p -= f.m
		}
	}
	f.entry[p] = i
	if p += step; p >= f.m {
		p -= f.m
	}
	f.pos[i] = p
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
