package keys

import (
	"cmp"
	"slices"

	"github.com/kolco-dev/kolco"
)

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
func Compare(a, b Assignment, ks *Set) Diff { return compare(a, b, ks, denseCells) }

func compare(a, b Assignment, ks *Set, maxDense int) Diff {
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
