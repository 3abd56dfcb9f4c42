package shards

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
)

// Current holds the table lookups read: a [Live] placement's or a
// [Follower]'s, swapped as a whole on each change.
type Current[T any] struct{ table atomic.Pointer[Table[T]] }

// Table returns the current table. It takes no lock.
func (c *Current[T]) Table() *Table[T] { return c.table.Load() }

// Live is a placement over a changing set of nodes with a value per node,
// built from a [Config]: lookups read its current [Table], and changes
// publish a new one. It is safe for concurrent use; changes are
// serialized.
type Live[T any] struct {
	Current[T]
	cfg   Config
	value func(kolco.Node) (T, error)

	mu sync.Mutex     // serializes changes; guards p
	p  algo.Placement // the current kolco placement; nil for ketama and modula
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
// state is state (algo.State of the placement to continue): the placement
// is that of the process that returned the state. An empty state means
// New's; a distribution that keeps no state ignores it. The error wraps
// kolco.ErrBadState besides New's errors.
func Restore[T any](cfg Config, nodes []kolco.Node, state []byte, value func(kolco.Node) (T, error)) (*Live[T], error) {
	opts, err := cfg.options(nodes)
	if err != nil {
		return nil, err
	}
	l := &Live[T]{cfg: cfg, value: value}
	if !cfg.twemproxy() {
		if !cfg.HistoryDependent() {
			state = nil
		}
		if l.p, err = algo.Restore(cfg.distribution(), nodes, opts, state); err != nil {
			return nil, err
		}
	}
	t, err := tableOf(cfg, l.p, nodes, nil, value)
	if err != nil {
		return nil, err
	}
	l.table.Store(t)
	return l, nil
}

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
// with the nodes' values. On error the current table stands. The error is
// as for New.
func (l *Live[T]) Update(nodes []kolco.Node) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	prev := l.table.Load()
	var p algo.Placement
	if l.p != nil {
		opts, err := l.cfg.options(l.p.Nodes())
		if err != nil {
			return err
		}
		// A copy restored from the state places as l.p does; readers of
		// the table that holds l.p keep it unchanged.
		if p, err = algo.Restore(l.cfg.distribution(), l.p.Nodes(), opts, algo.State(l.p)); err != nil {
			return err
		}
		if err := p.Apply(kolco.Diff(prev.nodes, nodes)); err != nil {
			return err
		}
	}
	t, err := tableOf(l.cfg, p, nodes, prev, l.value)
	if err != nil {
		return err
	}
	l.p = p
	l.table.Store(t)
	return nil
}

// tableOf returns the table of p over nodes: for ketama and modula (p
// nil), twemproxy's placement built over nodes. Each node's value is
// prev's when its address did not change, else made anew.
func tableOf[T any](cfg Config, p algo.Placement, nodes []kolco.Node, prev *Table[T], value func(kolco.Node) (T, error)) (*Table[T], error) {
	var placement kolco.Placement = p
	if p == nil {
		sorted := slices.Clone(nodes)
		slices.SortFunc(sorted, func(a, b kolco.Node) int { return strings.Compare(a.ID, b.ID) })
		tw, err := buildTwemproxy(cfg, sorted)
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
		v, err := value(n)
		if err != nil {
			return nil, fmt.Errorf("node %q: %w", n.ID, err)
		}
		vals[i] = v
	}
	return newTable(placement, cfg.HashTag, vals), nil
}
