package jumpback

import (
	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/memento"
	"github.com/kolco-dev/kolco/keyhash"
)

// Config holds the settings of a [Placement]. The zero value means the
// documented defaults.
type Config struct {
	// Hash turns a key into the 64-bit input of [Bucket]. Nil means
	// keyhash.XXH3.
	Hash keyhash.Func
}

// Placement places keys on nodes with JumpBackHash over buckets, and
// handles the removal of any node with MementoHash. It is safe for
// concurrent use.
//
// Its methods are those of package jump's Placement, which runs the same
// MementoHash table over jump hash: a *Placement is a kolco.Placement
// (Locate, LocateN, Nodes), kolco.IDLocator (LocateID), kolco.IndexLocator
// (LocateIndex), kolco.Mutable (Apply, Add, Remove, Reweight),
// kolco.StateMarshaler (MarshalState) and kolco.Identity (AppendIdentity),
// with the errors those interfaces name, and has Buckets() (total, working
// int): the size of the bucket array, removed buckets included, and the
// number of working buckets.
//
// Apply removes the nodes one at a time in the order given, then adds
// nodes one at a time in the order given, each taking the most recently
// removed bucket or, if none is removed, a new bucket at the end. Any
// weight other than 1 (0 reads as 1) is refused with kolco.ErrBadWeight.
// LocateN returns the owner, then the node that would own the key if the
// owner were removed, and so on. MarshalState returns the state that
// [Restore] reads.
type Placement struct{ *placement }

// placement is the MementoHash placement both jump and jumpback build on;
// its methods are Placement's.
type placement = memento.Placement

// New returns a placement with nodes on buckets 0..len(nodes)-1 in ID
// order, so that the same set gives the same placement whatever the order
// of the slice. The error wraps kolco.ErrBadNodeID, kolco.ErrDuplicateNode
// or kolco.ErrBadWeight (also for any weight other than 1 or 0: JumpBackHash
// has no weights). An empty set is allowed: lookups then fail with
// kolco.ErrNoNodes until nodes are added.
func New(nodes []kolco.Node, cfg Config) (*Placement, error) { return Restore(nodes, cfg, nil) }

// Restore returns the placement over nodes in the state that
// MarshalState wrote, in this process or another: it places every key as
// the placement that wrote the state, and changes as it would. An empty
// state gives the placement of [New]. The error wraps kolco.ErrBadState
// for a state that is not one of jumpback's over these nodes, or is an
// error of New.
func Restore(nodes []kolco.Node, cfg Config, state []byte) (*Placement, error) {
	p, err := memento.Restore(memento.Spec{Name: "jumpback", Hash: cfg.Hash, Bucket: Bucket}, nodes, state)
	if err != nil {
		return nil, err
	}
	return &Placement{p}, nil
}
