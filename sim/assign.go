package sim

import (
	"fmt"
	"slices"
	"sync"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/ring"
)

// Setup names an algorithm of package algo and its options: one contender
// of an experiment.
type Setup struct {
	// Algo is the algorithm's name, as algo.New takes it.
	Algo string
	// Opts are its options.
	Opts algo.Options
}

// Label returns the setup's name for tables: the algorithm's name, with
// the vnode count for the ring.
func (s Setup) Label() string {
	if s.Algo == "ring" && s.Opts.VNodes > 0 {
		return fmt.Sprintf("ring(V=%d)", s.Opts.VNodes)
	}
	return s.Algo
}

// New builds the setup's placement over nodes.
func (s Setup) New(nodes []kolco.Node) (algo.Placement, error) {
	return algo.New(s.Algo, nodes, s.Opts)
}

// Assignment is where a placement put every key of a [KeySet].
type Assignment struct {
	// Nodes is the placement's node set, sorted by ID.
	Nodes []kolco.Node
	// Owner[i] indexes Nodes: the owner of key i.
	Owner []int32
}

// Assign places every key of ks on all cores. A ring places the keys in one
// merge of their sorted hashes with its points ([ring.Ring.OwnersSorted]),
// the hashes being computed and sorted once per key set; other algorithms
// look each key up.
func Assign(p kolco.Placement, ks *KeySet) (Assignment, error) {
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
	parallel(ks.Len(), func(lo, hi int) {
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

func assignRing(r *ring.Ring, ks *KeySet, owner []int32) error {
	sorted, pos := ks.sortedFor(r.Hash)
	out := make([]int32, len(sorted))
	errs := make([]error, len(chunks(len(sorted))))
	var wg sync.WaitGroup
	for i, c := range chunks(len(sorted)) {
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

// index returns the position of id in a.Nodes, or -1.
func (a Assignment) index(id string) int32 {
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
		t[i] = b.index(n.ID)
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

// Diff compares two assignments of the same keys: the flows of keys from
// the nodes of the first (donors) to the nodes of the second (receivers).
type Diff struct {
	// From and To are the node sets of the two assignments.
	From, To []kolco.Node
	// Moved is the number of keys whose owner changed.
	Moved int
	// Keys, Bytes and Requests hold, at d*len(To)+r, the keys moved from
	// node d of From to node r of To, their count, and the same weighted
	// by key size and by request rate.
	Keys            []int
	Bytes, Requests []float64
}

// Compare returns the keys whose owner differs between a and b, which must
// place the same key set.
func Compare(a, b Assignment, ks *KeySet) Diff {
	trans := a.translate(b)
	w := len(b.Nodes)
	cells := len(a.Nodes) * w
	d := Diff{From: a.Nodes, To: b.Nodes, Keys: make([]int, cells), Bytes: make([]float64, cells), Requests: make([]float64, cells)}
	for i, o := range a.Owner {
		if n := b.Owner[i]; trans[o] != n {
			d.Moved++
			e := int(o)*w + int(n)
			d.Keys[e]++
			d.Bytes[e] += ks.Size(i)
			d.Requests[e] += ks.Rate(i)
		}
	}
	return d
}
