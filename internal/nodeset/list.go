package nodeset

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kolco-dev/kolco"
)

// List is an immutable list of nodes in another system's own order - the
// order its configuration lists servers in, and so the index space of its
// lookups - with the subset that receives keys (a backup or down server
// does not) and the copy sorted by ID that [kolco.Placement.Nodes] returns.
// The compat placements keep their nodes in one. The zero value is an empty
// list.
type List struct {
	all    []kolco.Node // in the other system's order
	placed []bool       // placed[i]: node i can receive keys
	up     []kolco.Node // the placed nodes, in order
	byID   []kolco.Node // the placed nodes, sorted by ID
}

// NewList returns a list of nodes in the given order. placed, when not nil,
// marks the nodes that receive keys; nil means all. The error wraps
// [kolco.ErrNoNodes] when no node is placed, and [kolco.ErrBadNodeID],
// [kolco.ErrBadWeight] or [kolco.ErrDuplicateNode] for a bad node.
func NewList(nodes []kolco.Node, placed []bool) (List, error) {
	if err := CheckNew(func(string) bool { return false }, nodes); err != nil {
		return List{}, err
	}
	l := List{all: slices.Clone(nodes), placed: make([]bool, len(nodes))}
	for i, n := range nodes {
		l.placed[i] = placed == nil || placed[i]
		if l.placed[i] {
			l.up = append(l.up, n)
		}
	}
	if len(l.up) == 0 {
		return List{}, kolco.ErrNoNodes
	}
	l.byID = slices.Clone(l.up)
	slices.SortFunc(l.byID, func(a, b kolco.Node) int { return strings.Compare(a.ID, b.ID) })
	return l, nil
}

// Len returns the number of nodes, placed or not.
func (l *List) Len() int { return len(l.all) }

// At returns node i in the other system's order: the list's own copy,
// which the caller must not modify (a placement's Locate returns it).
func (l *List) At(i int) *kolco.Node { return &l.all[i] }

// Node returns node i, the answer of a compat placement's Locate given
// its lookup's index; i < 0, a lookup's index on a placement without
// nodes, gives [kolco.ErrNoNodes].
func (l *List) Node(i int) (*kolco.Node, error) {
	if i < 0 {
		return nil, kolco.ErrNoNodes
	}
	return &l.all[i], nil
}

// Nodes returns a copy of the placed nodes sorted by ID.
func (l *List) Nodes() []kolco.Node { return slices.Clone(l.byID) }

// AppendN is the LocateN of every compat placement. It appends up to n
// distinct placed nodes to dst: first those at the indexes next(0),
// next(1), ... yields (a walk around a ring, a system's retry order) until
// it returns -1 or limit steps are taken, then any placed nodes still
// missing, in the list's order. It allocates only when dst lacks capacity.
// The error is [kolco.ErrNoNodes] for the zero List and wraps
// [kolco.ErrBadCount] when n < 1.
func (l *List) AppendN(dst []kolco.Node, n int, limit int, next func(step int) int) ([]kolco.Node, error) {
	if len(l.up) == 0 {
		return dst, kolco.ErrNoNodes
	}
	if n < 1 {
		return dst, fmt.Errorf("%w (got %d)", kolco.ErrBadCount, n)
	}
	want := min(n, len(l.up))
	start := len(dst)
	for step := 0; step < limit && len(dst)-start < want; step++ {
		i := next(step)
		if i < 0 {
			break
		}
		if l.placed[i] {
			dst = AppendNew(dst, start, l.all[i])
		}
	}
	return AppendRest(dst, start, want, l.up), nil
}

// AppendOrder is [List.AppendN] for a walk through order, a permutation of
// the list's indexes (a modula distribution's server order), from the
// position of index first around to the one before it.
func (l *List) AppendOrder(dst []kolco.Node, n int, order []int32, first int) ([]kolco.Node, error) {
	j := slices.Index(order, int32(first))
	return l.AppendN(dst, n, len(order), func(step int) int { return int(order[(j+step)%len(order)]) })
}
