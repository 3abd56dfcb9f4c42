package keys

import (
	"slices"
	"sync"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/ring"
	"github.com/kolco-dev/kolco/sim/internal/parallel"
)

// Assignment is where a placement put every key of a [Set].
type Assignment struct {
	// Nodes is the placement's node set, sorted by ID.
	Nodes []kolco.Node
	// Owner[i] indexes Nodes: the owner of key i.
	Owner []int32
}

// Assign places every key of ks on all cores. A ring places the keys in one
// merge of their sorted hashes with its points ([ring.Ring.OwnersSorted]),
// the hashes being computed and sorted once per key set; other algorithms
// look each key up. The error is kolco.ErrNoNodes for a placement without
// nodes, or else the first error a lookup returned.
func Assign(p kolco.Placement, ks *Set) (Assignment, error) {
	a := Assignment{Nodes: p.Nodes(), Owner: make([]int32, ks.Len())}
	if len(a.Nodes) == 0 {
		return a, kolco.ErrNoNodes
	}
	if r, ok := p.(*ring.Ring); ok {
		return a, assignRing(r, ks, a.Owner)
	}
	index := make(map[string]int32, len(a.Nodes))
	for i, n := range a.Nodes {
		index[n.ID] = int32(i)
	}
	var (
		mu    sync.Mutex
		first error
	)
	parallel.For(ks.Len(), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			n, err := p.Locate(ks.Key(i))
			if err != nil {
				mu.Lock()
				first = cmpErr(first, err)
				mu.Unlock()
				return
			}
			a.Owner[i] = index[n.ID]
		}
	})
	return a, first
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

func assignRing(r *ring.Ring, ks *Set, owner []int32) error {
	sorted, pos := ks.sortedFor(r.Hash)
	out := make([]int32, len(sorted))
	errs := make([]error, len(parallel.Chunks(len(sorted))))
	var wg sync.WaitGroup
	for i, c := range parallel.Chunks(len(sorted)) {
		wg.Go(func() { errs[i] = r.OwnersSorted(sorted[c[0]:c[1]], out[c[0]:c[1]]) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for i, o := range out {
		owner[pos[i]] = o
	}
	return nil
}

// Index returns the position of the node id in a.Nodes, or -1 when a has
// no such node.
func (a Assignment) Index(id string) int32 {
	i, ok := slices.BinarySearchFunc(a.Nodes, id, func(n kolco.Node, id string) int {
		switch {
		case n.ID < id:
			return -1
		case n.ID > id:
			return 1
		}
		return 0
	})
	if !ok {
		return -1
	}
	return int32(i)
}

// translate maps each node index of a to the index of the same ID in b, or -1.
func (a Assignment) translate(b Assignment) []int32 {
	t := make([]int32, len(a.Nodes))
	for i, n := range a.Nodes {
		t[i] = b.Index(n.ID)
	}
	return t
}

// Loads returns, per node of a, the sum of weight(i) over its keys.
func (a Assignment) Loads(weight func(i int) float64) []float64 {
	load := make([]float64, len(a.Nodes))
	for i, o := range a.Owner {
		load[o] += weight(i)
	}
	return load
}

// Counts returns the number of keys of each node.
func (a Assignment) Counts() []int {
	c := make([]int, len(a.Nodes))
	for _, o := range a.Owner {
		c[o]++
	}
	return c
}
