// Package kolco holds the vocabulary shared by every placement algorithm in
// this module: the [Node] a key is placed on, the [Placement] interface each
// algorithm satisfies, the optional [Mutable] interface of placements whose
// node set changes in place by a [Change] (see [Diff]), the optional lookups
// by ID and by index ([IDLocator], [IndexLocator]), the state and identity
// of a placement ([StateMarshaler], [Fingerprint]), and the sentinel errors
// they return.
//
// The algorithms live in packages of their own (ring, modulo, slots,
// rendezvous, jump, jumpback, jumpbackanchor, flip, binomial, power,
// maglev, multiprobe, anchor, dx, bounded), so that a program importing one of them pulls in
// nothing else; package algo builds
// any of them by name. Consistent hashing itself is described by Karger et al., "Consistent
// Hashing and Random Trees" (STOC 1997).
package kolco

import (
	"errors"
	"fmt"
	"math"
)

// Sentinel errors. Functions in this module wrap them with context; test for
// them with [errors.Is].
var (
	// ErrNoNodes is returned by a lookup on a placement without nodes.
	ErrNoNodes = errors.New("kolco: no nodes")
	// ErrDuplicateNode is returned when a node ID is added twice.
	ErrDuplicateNode = errors.New("kolco: duplicate node ID")
	// ErrUnknownNode is returned when a change names a node ID that is not present.
	ErrUnknownNode = errors.New("kolco: unknown node ID")
	// ErrBadWeight is returned for a weight that is negative, NaN or infinite
	// (and for zero where a weight is set explicitly, as in Reweight).
	ErrBadWeight = errors.New("kolco: weight must be a positive finite number")
	// ErrBadNodeID is returned for an empty node ID.
	ErrBadNodeID = errors.New("kolco: node ID must not be empty")
	// ErrBadCount is returned when a replica count n is less than 1.
	ErrBadCount = errors.New("kolco: replica count must be at least 1")
	// ErrBadConfig is returned for an invalid algorithm setting, such as
	// fewer than one virtual node.
	ErrBadConfig = errors.New("kolco: invalid configuration")
	// ErrBadState is returned for a placement state that cannot be
	// restored: written by another version or algorithm, not in canonical
	// form, truncated, or naming other nodes than those it is restored
	// with.
	ErrBadState = errors.New("kolco: invalid placement state")
)

// Node is one member of a placement: a server, shard or bucket.
//
// ID is the node's stable name and the only thing an algorithm hashes: a node
// removed and re-added under the same ID gets back exactly the keys it had.
// Never use an address that changes on restart as the ID.
type Node struct {
	// ID is the stable, unique, non-empty name of the node.
	ID string
	// Weight is the node's relative capacity: a node of weight 2 should get
	// twice the keys of a node of weight 1. Zero means 1.
	Weight float64
	// Zone is an optional failure domain (rack, zone, region) used by
	// algorithms that spread replicas over distinct zones.
	Zone string
	// Addr is optional payload, such as "10.0.0.7:11211"; it is never hashed.
	Addr string
}

// EffectiveWeight returns the node's weight with the zero value read as 1.
func (n Node) EffectiveWeight() float64 {
	if n.Weight == 0 {
		return 1
	}
	return n.Weight
}

// Validate reports whether the node can be placed: the error wraps
// [ErrBadNodeID] for an empty ID and [ErrBadWeight] for a negative, NaN or
// infinite weight.
func (n Node) Validate() error {
	if n.ID == "" {
		return ErrBadNodeID
	}
	if w := n.EffectiveWeight(); !(w > 0) || math.IsInf(w, 0) {
		return fmt.Errorf("node %q: %w (got %v)", n.ID, ErrBadWeight, w)
	}
	return nil
}

// Placement maps keys to nodes. Every algorithm in this module satisfies it.
// Implementations are safe for concurrent use; lookups do not allocate.
type Placement interface {
	// Locate returns the node that owns key. The node is the placement's
	// own copy, shared by every lookup: read it, never modify it. A later
	// change of membership builds new nodes and leaves it as it is. The
	// error is [ErrNoNodes], with nil, when the placement has no nodes.
	//
	// A pointer keeps the answer in one register; a Node (56 bytes)
	// returned by value is stored and copied again by the caller, which
	// cost a ring lookup about 2 ns of 12.
	Locate(key string) (*Node, error)

	// LocateN appends up to n distinct owners of key to dst, the first
	// being the node Locate returns, and returns the extended slice. When n
	// exceeds the number of nodes every node is appended once. The error is
	// [ErrBadCount] when n < 1 and [ErrNoNodes] when there are no nodes.
	LocateN(dst []Node, key string, n int) ([]Node, error)

	// Nodes returns a copy of the node set, sorted by ID.
	Nodes() []Node
}

// IDLocator is implemented by placements that can answer a lookup with the
// owner's ID alone: every algorithm of this module. It costs what Locate
// costs; it suits callers that keep their own state per node ID and an
// interface that takes no pointer.
type IDLocator interface {
	// LocateID returns the ID of the node Locate returns for key, with
	// the same error.
	LocateID(key string) (string, error)
}

// IndexLocator is implemented by placements that can answer a lookup with
// the owner's position in their node set: every algorithm of this module.
// A caller that keeps a table per node (server connections, counters)
// indexes it directly, so that a request hashes its key once and touches
// no map.
type IndexLocator interface {
	// LocateIndex returns the position of the node Locate returns for
	// key in the node set sorted by ID, the order Nodes returns. The error
	// is [ErrNoNodes], with -1, when there are no nodes.
	//
	// The position refers to the node set of the moment: a caller whose
	// table follows Nodes must not let the node set change while the
	// table is in use (apply a change to a copy of the placement and
	// publish it together with the new table).
	LocateIndex(key string) (int, error)
}

// Mutable is implemented by placements whose node set changes in place.
// Each call applies all of its changes or, on error, none of them. Add,
// Remove and Reweight are conveniences for the one-part changes that Apply
// makes.
type Mutable interface {
	// Apply makes the change c as a whole: all of it or, on error, none
	// (see [Change] for the order of its parts). The error wraps
	// [ErrUnknownNode] (removing or updating an absent ID, or removing one
	// twice), [ErrDuplicateNode] (adding a present ID, or naming one twice
	// in Add or in Update), [ErrBadNodeID], [ErrBadWeight], or
	// [ErrBadConfig] when the algorithm cannot hold the result.
	Apply(c Change) error
	// Add adds nodes. The error wraps [ErrDuplicateNode] (also for an ID
	// given twice in one call), [ErrBadNodeID], [ErrBadWeight], or
	// [ErrBadConfig] when the algorithm cannot hold the result (too many
	// points, a full fixed capacity).
	Add(nodes ...Node) error
	// Remove removes the nodes with the given IDs. The error wraps
	// [ErrUnknownNode], also for an ID given twice in one call: the second
	// removal names a node that is no longer there.
	Remove(ids ...string) error
	// Reweight sets the weight of one node. The error wraps
	// [ErrUnknownNode], [ErrBadWeight] (zero is rejected here), or
	// [ErrBadConfig] when the algorithm cannot hold the new weight.
	Reweight(id string, weight float64) error
}
