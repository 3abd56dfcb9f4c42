package article

import (
	"cmp"
	"slices"

	"github.com/kolco-dev/kolco/ring"
)

// keySet is a set of key hashes sorted ascending, with the position each
// had in the original key order. Sorted hashes let a ring place all keys in
// one merge with its points; the positions keep "first seen" orders, such
// as the tie-break of Python's Counter.most_common, as they were.
//
// The article keeps this small immutable set rather than a keys.Set: its
// hundred-odd measurements run at once on all cores over the same keys,
// which a keys.Set, filling its hash cache as it is used, cannot be shared
// for; and every figure it prints is a count, so owners stay in sorted
// order instead of being scattered back to key order as keys.Assign does.
type keySet struct {
	hashes []uint64
	pos    []int32
}

func sortKeys(hashes []uint64) keySet {
	type hp struct {
		h uint64
		p int32
	}
	pairs := make([]hp, len(hashes))
	for i, h := range hashes {
		pairs[i] = hp{h, int32(i)}
	}
	slices.SortFunc(pairs, func(a, b hp) int { return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.p, b.p)) })
	ks := keySet{hashes: make([]uint64, len(pairs)), pos: make([]int32, len(pairs))}
	for i, x := range pairs {
		ks.hashes[i], ks.pos[i] = x.h, x.p
	}
	return ks
}

// placement is where a ring put every key of a keySet: owner[i] indexes nodes.
type placement struct {
	nodes []string
	owner []int32
}

func place(r *ring.Ring, ks keySet) (placement, error) {
	p := placement{owner: make([]int32, len(ks.hashes))}
	for _, n := range r.Nodes() {
		p.nodes = append(p.nodes, n.ID)
	}
	return p, r.OwnersSorted(ks.hashes, p.owner)
}

// index returns the position of id in p.nodes, or -1.
func (p placement) index(id string) int32 {
	i, ok := slices.BinarySearch(p.nodes, id)
	if !ok {
		return -1
	}
	return int32(i)
}

// translate maps each node index of p to the index of the same ID in q, or -1.
func (p placement) translate(q placement) []int32 {
	t := make([]int32, len(p.nodes))
	for i, id := range p.nodes {
		t[i] = q.index(id)
	}
	return t
}

// tally counts keys per node and remembers, per node, the earliest key
// position counted, so that mostCommon breaks ties as Python's Counter does
// (first seen wins).
type tally struct {
	count []int
	first []int32
}

func newTally(nodes int) *tally {
	t := &tally{count: make([]int, nodes), first: make([]int32, nodes)}
	for i := range t.first {
		t.first[i] = -1
	}
	return t
}

func (t *tally) add(node, pos int32) {
	t.count[node]++
	if t.first[node] < 0 || pos < t.first[node] {
		t.first[node] = pos
	}
}

// seen returns the number of nodes counted at least once.
func (t *tally) seen() int {
	n := 0
	for _, c := range t.count {
		if c > 0 {
			n++
		}
	}
	return n
}

// mostCommon returns the node with the highest count, the first seen
// among equals, or -1 when nothing was counted.
func (t *tally) mostCommon() int32 {
	best := int32(-1)
	for i, c := range t.count {
		if c == 0 {
			continue
		}
		if best < 0 || c > t.count[best] || (c == t.count[best] && t.first[i] < t.first[best]) {
			best = int32(i)
		}
	}
	return best
}
