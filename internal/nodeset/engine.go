package nodeset

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/kolco-dev/kolco"
)

// Cell holds the current immutable state of a placement. Readers [Cell.Load]
// it without a lock and never see half a change; writers replace it one at
// a time with [Cell.Update], which builds the next state beside the
// current one and publishes it with one atomic store. The zero Cell holds
// nil.
type Cell[S any] struct {
	writeMu sync.Mutex // serializes writers; readers never take it
	cur     atomic.Pointer[S]
}

// Load returns the current state.
func (c *Cell[S]) Load() *S { return c.cur.Load() }

// Store publishes s, for a constructor; later changes go through Update.
func (c *Cell[S]) Store(s *S) { c.cur.Store(s) }

// Update publishes next(current) unless next fails, and returns next's
// error. Calls are serialized, so next sees the state the previous call
// published.
func (c *Cell[S]) Update(next func(old *S) (*S, error)) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	s, err := next(c.cur.Load())
	if err != nil {
		return err
	}
	c.cur.Store(s)
	return nil
}

// Engine implements the methods of [kolco.Mutable] for a placement
// whose state is an S. The algorithm fills in the fields and calls
// [Engine.Init]; every change is then validated against the node set of
// the current state, turned into a [Delta], and handed to Next, whose
// result is published atomically. On any error nothing changes.
type Engine[S any] struct {
	Cell[S]
	// Name prefixes every error, as in "ring: add: ...".
	Name string
	// Unweighted makes every weight other than 1 (0 reads as 1) an error
	// wrapping kolco.ErrBadWeight, for algorithms without weights.
	Unweighted bool
	// Set returns the node set of a state.
	Set func(s *S) Set
	// Next returns the state after d, built from old, or an error (such
	// as one wrapping kolco.ErrBadConfig when the result would not fit).
	Next func(old *S, d Delta) (*S, error)
}

// Init publishes the state that Next builds from empty, the state without
// nodes, by adding nodes, which it hands to Next in ID order so that the
// result does not depend on the order of the slice. The error is that of
// [Engine.Apply].
func (e *Engine[S]) Init(empty *S, nodes []kolco.Node) error {
	d, err := Set{}.Apply(kolco.Change{Add: nodes})
	if err == nil {
		d.Added = d.New.Nodes()
		err = e.checkWeights(d)
	}
	var s *S
	if err == nil {
		s, err = e.Next(empty, d)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", e.Name, err)
	}
	e.Store(s)
	return nil
}

// Apply makes the change c, all of it or, on error, none. The error wraps
// the sentinels of [Set.Apply], kolco.ErrBadWeight for a weight an
// unweighted algorithm cannot take, or Next's error.
func (e *Engine[S]) Apply(c kolco.Change) error {
	return e.Update(func(old *S) (*S, error) { return e.Step(old, c) })
}

// Add adds nodes in one change: Apply(kolco.Change{Add: nodes}).
func (e *Engine[S]) Add(nodes ...kolco.Node) error { return e.Apply(kolco.Change{Add: nodes}) }

// Remove removes nodes in one change: Apply(kolco.Change{Remove: ids}).
func (e *Engine[S]) Remove(ids ...string) error { return e.Apply(kolco.Change{Remove: ids}) }

// Reweight sets the weight of node id, keeping its zone and address. The
// error wraps kolco.ErrBadWeight for a weight that is not positive and
// finite (zero included, unlike in a Node) and otherwise is that of Apply.
func (e *Engine[S]) Reweight(id string, weight float64) error {
	if err := CheckWeight(weight); err != nil {
		return fmt.Errorf("%s: reweight: node %q: %w", e.Name, id, err)
	}
	return e.Update(func(old *S) (*S, error) {
		set := e.Set(old)
		i, ok := set.Index(id)
		if !ok {
			return nil, fmt.Errorf("%s: reweight: %w: %q", e.Name, kolco.ErrUnknownNode, id)
		}
		n := set.At(i)
		n.Weight = weight
		return e.Step(old, kolco.Change{Update: []kolco.Node{n}})
	})
}

// Step returns the state after c, built from old, without publishing it:
// Apply is Update(Step), and an algorithm that reports more than an error
// (such as the slots that moved) calls Step inside its own Update. The
// error is that of Apply.
func (e *Engine[S]) Step(old *S, c kolco.Change) (*S, error) {
	d, err := e.Set(old).Apply(c)
	if err == nil {
		err = e.checkWeights(d)
	}
	var s *S
	if err == nil {
		s, err = e.Next(old, d)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.Name, err)
	}
	return s, nil
}

// checkWeights refuses, for an unweighted algorithm, any node of d.New
// whose effective weight is not 1; the old nodes always pass.
func (e *Engine[S]) checkWeights(d Delta) error {
	if !e.Unweighted {
		return nil
	}
	for _, n := range d.New.nodes {
		if w := n.EffectiveWeight(); w != 1 {
			return unweightedError{node: n.ID, weight: w}
		}
	}
	return nil
}

// unweightedError is the error of checkWeights. It wraps
// kolco.ErrBadWeight without showing its text, "weight must be a
// positive finite number", which a weight of 2 would contradict; Step
// prefixes the algorithm's name.
type unweightedError struct {
	node   string
	weight float64
}

func (e unweightedError) Error() string {
	return fmt.Sprintf("node %q has weight %v, but this algorithm takes no weights (every node weighs 1): "+
		"give it weight 1, or use an algorithm that takes weights, such as ring or rendezvous", e.node, e.weight)
}

func (e unweightedError) Unwrap() error { return kolco.ErrBadWeight }

// Restore publishes the state that read makes of data over the current
// node set, for a constructor restoring a placement: data must be that
// state's own encoding by marshal, the one form a state restores from.
// The error wraps read's (kolco.ErrBadState for a state that is not one of
// this node set) or kolco.ErrBadState, prefixed with Name.
func (e *Engine[S]) Restore(data []byte, read func(data []byte, set Set) (*S, error), marshal func(s *S) []byte) error {
	s, err := read(data, e.Set(e.Load()))
	if err == nil {
		err = CheckCanonical(data, marshal(s))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", e.Name, err)
	}
	e.Store(s)
	return nil
}
