package shards

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
)

// Live is a placement over a changing set of nodes with a value per node,
// built from a [Config]: lookups read its current [Table], and changes
// publish a new one. It is safe for concurrent use; changes are
// serialized.
type Live[T any] struct {
	cfg   Config
	value func(kolco.Node) (T, error)

	mu    sync.Mutex     // serializes changes; guards p
	p     algo.Placement // the current kolco placement; nil for ketama and modula
	table atomic.Pointer[Table[T]]
}

// New returns a live placement of nodes as cfg says, with the value of each
// node made by value (called once for each node, and again only when a
// change adds the node anew or changes its address). The nodes may be in
// any order; their IDs are the names placed (see the package doc). The
// error wraps [ErrBadConfig], the placement's own errors
// (kolco.ErrNoNodes, kolco.ErrDuplicateNode, ...), or is value's.
func New[T any](cfg Config, nodes []kolco.Node, value func(kolco.Node) (T, error)) (*Live[T], error) {
	return Restore(cfg, nodes, nil, value)
}

// Restore is [New] for a history-dependent distribution whose history
// state (algo.State, membership.Version.State) is state: the placement is
// that of the process that wrote the state. An empty state means New's.
// A state is ignored by a distribution that keeps none. The error wraps
// kolco.ErrBadState besides New's errors.
func Restore[T any](cfg Config, nodes []kolco.Node, state []byte, value func(kolco.Node) (T, error)) (*Live[T], error) {
	l := &Live[T]{cfg: cfg, value: value}
	l.mu.Lock()
	defer l.mu.Unlock()
	t, err := l.build(nodes, state, nil)
	if err != nil {
		return nil, err
	}
	l.table.Store(t)
	return l, nil
}

// Table returns the current table.
func (l *Live[T]) Table() *Table[T] { return l.table.Load() }

// Config returns the configuration.
func (l *Live[T]) Config() Config { return l.cfg }

// State returns the history state of the current placement (algo.State):
// nil for a distribution that keeps none.
func (l *Live[T]) State() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.p == nil {
		return nil
	}
	return algo.State(l.p)
}

// Update makes nodes the node set: the change from the current set
// (kolco.Diff) is applied to a copy of the placement, which is published
// with the nodes' values. When state is not nil and the distribution is
// history-dependent, the result must have that state (the store's record
// of the history, membership.Version.State); if the change alone does not
// give it - this process missed a change - the placement is restored from
// it instead. On error the current table stands. The error is as for New.
func (l *Live[T]) Update(nodes []kolco.Node, state []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, err := l.build(nodes, state, l.table.Load())
	if err != nil {
		return err
	}
	l.table.Store(t)
	return nil
}

// build returns the table of nodes: for a first build (prev nil) the
// placement restored from state; else the change from prev's nodes
// applied to a copy of the placement. It sets l.p.
func (l *Live[T]) build(nodes []kolco.Node, state []byte, prev *Table[T]) (*Table[T], error) {
	opts, err := l.cfg.options(nodes)
	if err != nil {
		return nil, err
	}
	if !l.cfg.HistoryDependent() {
		state = nil
	}
	var p algo.Placement
	switch {
	case l.cfg.twemproxy():
	case prev == nil:
		if p, err = algo.Restore(l.cfg.distribution(), nodes, opts, state); err != nil {
			return nil, err
		}
	default:
		if p, err = l.copyPlacement(); err != nil {
			return nil, err
		}
		if err := p.Apply(kolco.Diff(prev.nodes, nodes)); err != nil {
			return nil, err
		}
		if state != nil && !bytes.Equal(algo.State(p), state) {
			if p, err = algo.Restore(l.cfg.distribution(), nodes, opts, state); err != nil {
				return nil, err
			}
		}
	}
	t, err := l.publishable(p, nodes, prev)
	if err != nil {
		return nil, err
	}
	l.p = p
	return t, nil
}

// copyPlacement returns a copy of l.p: the same algorithm over the same
// nodes in the same state, placing every key alike.
func (l *Live[T]) copyPlacement() (algo.Placement, error) {
	nodes := l.p.Nodes()
	opts, err := l.cfg.options(nodes)
	if err != nil {
		return nil, err
	}
	return algo.Restore(l.cfg.distribution(), nodes, opts, algo.State(l.p))
}

// publishable returns the table of p (for ketama and modula, p is nil and
// twemproxy's placement is built over nodes), reusing prev's value of each
// node whose address did not change.
func (l *Live[T]) publishable(p algo.Placement, nodes []kolco.Node, prev *Table[T]) (*Table[T], error) {
	var placement kolco.Placement = p
	if p == nil {
		sorted := slices.Clone(nodes)
		slices.SortFunc(sorted, func(a, b kolco.Node) int { return strings.Compare(a.ID, b.ID) })
		tw, err := buildTwemproxy(l.cfg, sorted)
		if err != nil {
			return nil, err
		}
		placement = tw
	}
	final := placement.Nodes()
	old := map[string]int{}
	if prev != nil {
		for i, n := range prev.nodes {
			old[n.ID] = i
		}
	}
	vals := make([]T, len(final))
	for i, n := range final {
		if j, ok := old[n.ID]; ok && prev.nodes[j].Addr == n.Addr {
			vals[i] = prev.vals[j]
			continue
		}
		v, err := l.value(n)
		if err != nil {
			return nil, fmt.Errorf("node %q: %w", n.ID, err)
		}
		vals[i] = v
	}
	return newTable(placement, l.cfg.HashTag, vals), nil
}
