package power

import (
	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/memento"
	"github.com/kolco-dev/kolco/keyhash"
)

// Config holds the settings of a [Placement]. The zero value means the
// documented defaults.
type Config struct {
	// Hash turns a key into the 64-bit input of [Bucket]. Nil means
	// keyhash.XXH3. Bucket reads the low bits of its input as they are,
	// so a weak hash (keyhash.FNV1a, keyhash.CRC32) is finalized with
	// keyhash.Finalized first.
	Hash keyhash.Func
}

// Placement places keys on nodes with power consistent hash over buckets, and handles
// the removal of any node with MementoHash. It is safe for concurrent use.
//
// It runs the MementoHash table of packages jump and jumpback over
// [Bucket]: a *Placement is a kolco.Placement (Locate, LocateN, Nodes),
// kolco.IDLocator (LocateID), kolco.IndexLocator (LocateIndex),
// kolco.Mutable (Apply, Add, Remove, Reweight), kolco.StateMarshaler
// (MarshalState) and kolco.Identity (AppendIdentity), with the errors
// those interfaces name, and has Buckets() (total, working int): the size
// of the bucket array, removed buckets included, and the number of working
// buckets. Changes, replicas and state are those of package jump.
type Placement struct{ *placement }

type placement = memento.Placement

// New returns a placement with nodes on buckets 0..len(nodes)-1 in ID
// order, so that the same set gives the same placement whatever the order
// of the slice. The error wraps kolco.ErrBadNodeID, kolco.ErrDuplicateNode
// or kolco.ErrBadWeight (also for any weight other than 1 or 0: power consistent hash
// has no weights). An empty set is allowed: lookups then fail with
// kolco.ErrNoNodes until nodes are added.
func New(nodes []kolco.Node, cfg Config) (*Placement, error) { return Restore(nodes, cfg, nil) }

// Restore returns the placement over nodes in the state that MarshalState
// wrote: it places every key as the placement that wrote the state, and
// changes as it would. An empty state gives the placement of [New]. The
// error wraps kolco.ErrBadState for a state that is not one of power's over
// these nodes, or is an error of New.
func Restore(nodes []kolco.Node, cfg Config, state []byte) (*Placement, error) {
	p, err := memento.Restore(memento.Spec{Name: "power", Hash: cfg.Hash, Finalize: true, Bucket: Bucket}, nodes, state)
	if err != nil {
		return nil, err
	}
	return &Placement{p}, nil
}
