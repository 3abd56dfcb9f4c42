package binomial

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

// Placement places keys on nodes with BinomialHash over buckets, and removes
// any node with MementoHash. It is safe for concurrent use. It is package
// jump's Placement over another bucket function: the same methods
// (kolco.Placement, IDLocator, IndexLocator, Mutable, StateMarshaler,
// Identity, and Buckets), errors, changes, replicas and state, weights
// other than 1 refused with kolco.ErrBadWeight.
type Placement struct{ *placement }

type placement = memento.Placement

// New returns a placement with nodes on buckets 0..len(nodes)-1 in ID
// order, as jump.New does. The error wraps kolco.ErrBadNodeID,
// kolco.ErrDuplicateNode or kolco.ErrBadWeight (any weight other than 1).
func New(nodes []kolco.Node, cfg Config) (*Placement, error) { return Restore(nodes, cfg, nil) }

// Restore returns the placement over nodes in the state MarshalState
// wrote, as jump.Restore does: the error wraps kolco.ErrBadState for a
// state that is not one of binomial's over these nodes, or is an error of New.
func Restore(nodes []kolco.Node, cfg Config, state []byte) (*Placement, error) {
	p, err := memento.Restore(memento.Spec{Name: "binomial", Hash: cfg.Hash, Finalize: true, Bucket: Bucket}, nodes, state)
	if err != nil {
		return nil, err
	}
	return &Placement{p}, nil
}
