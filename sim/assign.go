package sim

import (
	"cmp"
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
	// Edges are the non-empty flows, ordered by donor, then receiver.
	Edges []Edge
}

// Edge is the keys moved from node From of a Diff's first assignment to
// node To of its second: their count, bytes and request rate.
type Edge struct {
	// From and To index the two node sets.
	From, To int32
	// Keys counts the keys; Bytes and Requests sum their sizes and rates.
	Keys            int
	Bytes, Requests float64
}

// denseCells is the donor x receiver count up to which Compare tallies
// flows in a matrix; larger clusters use a map of the flows that occur.
const denseCells = 1 << 20

// Compare returns the keys whose owner differs between a and b, which must
// place the same key set.
func Compare(a, b Assignment, ks *KeySet) Diff { return compare(a, b, ks, denseCells) }

func compare(a, b Assignment, ks *KeySet, maxDense int) Diff {
	trans := a.translate(b)
	w := len(b.Nodes)
	d := Diff{From: a.Nodes, To: b.Nodes}
	var (
		dense  []Edge
		sparse map[int]*Edge
	)
	if len(a.Nodes)*w <= maxDense {
		dense = make([]Edge, len(a.Nodes)*w)
	} else {
		sparse = map[int]*Edge{}
	}
	for i, o := range a.Owner {
		n := b.Owner[i]
		if trans[o] == n {
			continue
		}
		d.Moved++
		c := int(o)*w + int(n)
		var e *Edge
		if dense != nil {
			e = &dense[c]
		} else if e = sparse[c]; e == nil {
			e = &Edge{}
			sparse[c] = e
		}
		e.From, e.To = o, n
		e.Keys++
		e.Bytes += ks.Size(i)
		e.Requests += ks.Rate(i)
	}
	for _, e := range dense {
		if e.Keys > 0 {
			d.Edges = append(d.Edges, e)
		}
	}
	for _, e := range sparse {
		d.Edges = append(d.Edges, *e)
	}
	slices.SortFunc(d.Edges, func(x, y Edge) int { return cmp.Or(cmp.Compare(x.From, y.From), cmp.Compare(x.To, y.To)) })
	return d
}
