package membership

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
)

// maxStateSize bounds a stored placement state: a slot table of 16384
// slots or a bucket array of a few thousand nodes fits many times over.
const maxStateSize = 4 << 20

// PlacementState is what a store keeps beside the nodes for a
// history-dependent placement (jump, anchor, dx, slots, ...), so that
// every process following the store places keys alike, however late it
// started: the algorithm, the nodes the state was computed for, and the
// state itself ([algo.State]). It is the content of [Version.State].
//
// # The placement at a version
//
// The placement a follower builds at a version is a function of that
// version alone ([PlacementState.Placement]): the state restored over its
// nodes ([algo.Restore]), then changed to the version's nodes as one
// [kolco.Diff]. Writers of membership keep the state current: a write that
// changes the nodes computes the next state from the stored one
// ([PlacementState.Next]) and writes both in one transaction guarded by
// the revision it read (package membership/etcd does this in every
// [Source] write). The diff is then empty, and the placement is the stored
// one, which equals the placement of a process that applied every change
// in turn. A change made without computing the state - a registration's
// lease expiring - leaves the state behind its nodes; the placement is
// still a function of the version, and a follower with
// [FollowConfig].WriteState writes the state back, guarded by the
// revision, so that the next change applies to it.
//
// How a state changes depends on the algorithm and the state, never on
// the key hash: a writer computes it without knowing the hash its readers
// place keys with.
type PlacementState struct {
	// Algorithm is the algorithm's name in package algo.
	Algorithm string
	// Nodes are the nodes the state was computed for, sorted by ID, with
	// their IDs and weights only: zones and addresses never change a
	// history-dependent placement.
	Nodes []kolco.Node
	// State is the placement's state, as [algo.State] returns it.
	State []byte
}

// storedState is a PlacementState in the store, as JSON:
// {"algorithm":"jump","nodes":[{"id":"a"},{"id":"b","weight":2}],"state":"<base64>"}.
type storedState struct {
	Algorithm string       `json:"algorithm"`
	Nodes     []storedNode `json:"nodes"`
	State     []byte       `json:"state"`
}

type storedNode struct {
	ID     string  `json:"id"`
	Weight float64 `json:"weight,omitempty"` // 0 for weight 1
}

// NewPlacementState returns the state of a placement of the algorithm
// over nodes built by [algo.New] with opts, the first state a store holds.
// Only the options that decide how the state changes are kept in it
// (anchor's capacity, the number of slots). The error wraps
// [ErrBadConfig] for an algorithm that keeps no state or that package
// algo does not know, or is the algorithm's error for nodes or options it
// refuses.
func NewPlacementState(algorithm string, nodes []kolco.Node, opts algo.Options) (PlacementState, error) {
	if err := checkHistoryDependent(algorithm); err != nil {
		return PlacementState{}, err
	}
	p, err := algo.New(algorithm, nodes, opts)
	if err != nil {
		return PlacementState{}, err
	}
	return StateOf(algorithm, p), nil
}

// StateOf returns the state of p, a placement of the algorithm.
func StateOf(algorithm string, p kolco.Placement) PlacementState {
	return PlacementState{Algorithm: algorithm, Nodes: stateNodes(p.Nodes()), State: algo.State(p)}
}

// checkHistoryDependent returns an error wrapping [ErrBadConfig] unless
// algorithm is one of algo's history-dependent algorithms.
func checkHistoryDependent(algorithm string) error {
	info, ok := algo.Lookup(algorithm)
	switch {
	case !ok:
		return fmt.Errorf("%w: unknown algorithm %q", ErrBadConfig, algorithm)
	case !info.HistoryDependent:
		return fmt.Errorf("%w: %s keeps no state: its placement follows from the node set alone", ErrBadConfig, info.Name)
	case info.Name != algorithm:
		return fmt.Errorf("%w: algorithm %q is spelt %q", ErrBadConfig, algorithm, info.Name)
	}
	return nil
}

// stateNodes returns nodes as a state keeps them: ID and weight, sorted.
func stateNodes(nodes []kolco.Node) []kolco.Node {
	out := make([]kolco.Node, len(nodes))
	for i, n := range nodes {
		out[i] = kolco.Node{ID: n.ID, Weight: n.EffectiveWeight()}
		if out[i].Weight == 1 {
			out[i].Weight = 0
		}
	}
	SortNodes(out)
	return out
}

// Marshal returns the state's encoding in a store: canonical, so that
// equal states encode alike.
func (s PlacementState) Marshal() []byte {
	out := storedState{Algorithm: s.Algorithm, Nodes: make([]storedNode, len(s.Nodes)), State: s.State}
	for i, n := range stateNodes(s.Nodes) {
		out.Nodes[i] = storedNode{ID: n.ID, Weight: n.Weight}
	}
	data, _ := json.Marshal(out) // plain fields and finite weights always encode
	return data
}

// ParsePlacementState reads a stored state. It accepts only the canonical
// encoding ([PlacementState.Marshal]) of a state that restores over its
// nodes. The error wraps [ErrBadContent], and the algorithm's
// [kolco.ErrBadState] for a state it refuses.
func ParsePlacementState(data []byte) (PlacementState, error) {
	bad := func(format string, args ...any) (PlacementState, error) {
		return PlacementState{}, fmt.Errorf("%w: placement state: %s", ErrBadContent, fmt.Sprintf(format, args...))
	}
	if len(data) > maxStateSize {
		return bad("longer than %d MiB", maxStateSize>>20)
	}
	var in storedState
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return bad("not a placement state's JSON (%v)", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return bad("more than one JSON value")
	}
	if err := checkHistoryDependent(in.Algorithm); err != nil {
		return bad("%v", err)
	}
	s := PlacementState{Algorithm: in.Algorithm, Nodes: make([]kolco.Node, len(in.Nodes)), State: in.State}
	for i, n := range in.Nodes {
		s.Nodes[i] = kolco.Node{ID: n.ID, Weight: n.Weight}
	}
	if err := (Version{Nodes: s.Nodes}).Validate(); err != nil {
		return bad("%v", err)
	}
	if !bytes.Equal(s.Marshal(), data) {
		return bad("not in canonical form")
	}
	if _, err := s.restore(algo.Options{}); err != nil {
		return PlacementState{}, fmt.Errorf("%w: placement state: %w", ErrBadContent, err)
	}
	return s, nil
}

// restore returns the placement the state describes, over its own nodes.
func (s PlacementState) restore(opts algo.Options) (algo.Placement, error) {
	return algo.Restore(s.Algorithm, s.Nodes, opts, s.State)
}

// Current reports whether the state was computed for nodes: the same IDs
// with the same weights.
func (s PlacementState) Current(nodes []kolco.Node) bool {
	return slices.Equal(stateNodes(s.Nodes), stateNodes(nodes))
}

// Placement returns the placement at a version whose nodes are nodes and
// whose stored state is s: the state restored over its own nodes with
// opts, then changed to nodes by one [kolco.Diff] (nothing when the state
// is current). Every process that calls it with the same version and
// options gets a placement with the same fingerprint. The error wraps
// [kolco.ErrBadState] for a state opts disagree with (another capacity or
// number of slots), or is the algorithm's error for the change (a weight
// an unweighted algorithm refuses, a full capacity).
func (s PlacementState) Placement(nodes []kolco.Node, opts algo.Options) (algo.Placement, error) {
	p, err := s.restore(opts)
	if err != nil {
		return nil, err
	}
	if err := p.Apply(kolco.Diff(p.Nodes(), nodes)); err != nil {
		return nil, err // the algorithm's error names it
	}
	return p, nil
}

// Next returns the state after the nodes change to nodes: the one a writer
// of membership stores with the change (see [PlacementState]). Its
// error is that of [PlacementState.Placement].
func (s PlacementState) Next(nodes []kolco.Node) (PlacementState, error) {
	p, err := s.Placement(stateNodes(nodes), algo.Options{})
	if err != nil {
		return PlacementState{}, err
	}
	return StateOf(s.Algorithm, p), nil
}

// String describes the state in a few words, such as "jump over 4 nodes
// (1 KiB)".
func (s PlacementState) String() string {
	nodes := "nodes"
	if len(s.Nodes) == 1 {
		nodes = "node"
	}
	return fmt.Sprintf("%s over %d %s (%d bytes)", s.Algorithm, len(s.Nodes), nodes, len(s.State))
}
