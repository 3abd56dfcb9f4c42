package shards

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/twemproxy"
	"github.com/kolco-dev/kolco/internal/bytestr"
)

// Table is one immutable version of a placement with a value per node:
// safe for concurrent use, and its lookups take no lock and allocate
// nothing.
type Table[T any] struct {
	p      kolco.Placement
	loc    kolco.IndexLocator
	nodes  []kolco.Node // p's node set sorted by ID: LocateIndex's order
	vals   []T          // vals[i] belongs to nodes[i]
	tag    [2]byte
	hasTag bool
}

// newTable returns the table of p with vals[i] for the node at position i
// of p.Nodes(); the placement's own LocateIndex is used when it has one.
func newTable[T any](p kolco.Placement, tag string, vals []T) *Table[T] {
	t := &Table[T]{p: p, nodes: p.Nodes(), vals: vals}
	switch q := p.(type) {
	case kolco.IndexLocator:
		t.loc = q
	case *twemproxy.Pool: // built over nodes sorted by ID: its indexes are positions
		t.loc = twemproxyIndex{q}
	default:
		t.loc = &idIndex{p: p, ids: make(map[string]int, len(t.nodes))}
		for i, n := range t.nodes {
			t.loc.(*idIndex).ids[n.ID] = i
		}
	}
	if len(tag) == 2 {
		t.tag, t.hasTag = [2]byte{tag[0], tag[1]}, true
	}
	return t
}

// Static returns the table of any placement p, with the value of each of
// its nodes made by value (called once per node, in p.Nodes() order) and
// hash tag tag ("" for none, else two characters). A table over a
// placement that changes afterwards is undefined: change placements
// through [Live]. The error wraps [ErrBadConfig] for a bad tag, or is
// value's.
func Static[T any](p kolco.Placement, tag string, value func(kolco.Node) (T, error)) (*Table[T], error) {
	if len(tag) != 0 && len(tag) != 2 {
		return nil, fmt.Errorf("%w: hash tag %q is not two characters", ErrBadConfig, tag)
	}
	nodes := p.Nodes()
	vals := make([]T, len(nodes))
	for i, n := range nodes {
		v, err := value(n)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return newTable(p, tag, vals), nil
}

// Key returns the part of key that is hashed: under the hash tag, the
// text between its first opening character and the first closing one
// after it, when that text is not empty; else key. It is twemproxy's rule
// (twemproxy.Tagged) and go-redis's for "{}".
func (t *Table[T]) Key(key string) string {
	if !t.hasTag {
		return key
	}
	return Tagged(key, t.tag)
}

// Tagged returns the part of key hashed under hash tag tag, as
// twemproxy.Tagged does for a key in bytes.
func Tagged(key string, tag [2]byte) string {
	start := strings.IndexByte(key, tag[0])
	if start < 0 {
		return key
	}
	end := strings.IndexByte(key[start+1:], tag[1])
	if end <= 0 {
		return key
	}
	return key[start+1 : start+1+end]
}

// Index returns the position, in [Table.Nodes], of the node key is placed
// on. The error is [kolco.ErrNoNodes], with -1, for a table without nodes.
func (t *Table[T]) Index(key string) (int, error) {
	if t.hasTag {
		key = Tagged(key, t.tag)
	}
	return t.loc.LocateIndex(key)
}

// Lookup returns the value of the node key is placed on. The error is
// [kolco.ErrNoNodes] for a table without nodes.
func (t *Table[T]) Lookup(key string) (T, error) {
	i, err := t.Index(key)
	if err != nil {
		var zero T
		return zero, err
	}
	return t.vals[i], nil
}

// Len returns the number of nodes.
func (t *Table[T]) Len() int { return len(t.nodes) }

// Node returns the node at position i, 0 <= i < Len.
func (t *Table[T]) Node(i int) kolco.Node { return t.nodes[i] }

// Value returns the value of the node at position i, 0 <= i < Len.
func (t *Table[T]) Value(i int) T { return t.vals[i] }

// Nodes returns a copy of the nodes, sorted by ID.
func (t *Table[T]) Nodes() []kolco.Node { return slices.Clone(t.nodes) }

// Placement returns the placement, which must not be changed.
func (t *Table[T]) Placement() kolco.Placement { return t.p }

// Preference appends to dst the positions of up to n nodes for key in the
// placement's preference order (LocateN): the owner first, then the nodes
// that take its keys when it is skipped. buf is scratch space for the
// placement's answer, returned for reuse. The error wraps
// [kolco.ErrBadCount] for n < 1 and is [kolco.ErrNoNodes] without nodes.
func (t *Table[T]) Preference(dst []int, buf []kolco.Node, key string, n int) ([]int, []kolco.Node, error) {
	buf, err := t.p.LocateN(buf[:0], t.Key(key), n)
	if err != nil {
		return dst, buf, err
	}
	for _, node := range buf {
		i, _ := slices.BinarySearchFunc(t.nodes, node.ID, func(n kolco.Node, id string) int { return strings.Compare(n.ID, id) })
		dst = append(dst, i)
	}
	return dst, buf, nil
}

// twemproxyIndex answers LocateIndex with a twemproxy pool's Index.
type twemproxyIndex struct{ p *twemproxy.Pool }

func (x twemproxyIndex) LocateIndex(key string) (int, error) {
	if i := x.p.Index(bytestr.Of(key)); i >= 0 {
		return i, nil
	}
	return -1, kolco.ErrNoNodes
}

// idIndex answers LocateIndex for a placement without it, by ID.
type idIndex struct {
	p   kolco.Placement
	ids map[string]int
}

func (x *idIndex) LocateIndex(key string) (int, error) {
	if l, ok := x.p.(kolco.IDLocator); ok {
		id, err := l.LocateID(key)
		if err != nil {
			return -1, err
		}
		return x.ids[id], nil
	}
	n, err := x.p.Locate(key)
	if err != nil {
		return -1, err
	}
	return x.ids[n.ID], nil
}
