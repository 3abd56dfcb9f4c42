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
type Placement struct {
	p *memento.Placement
}

// New returns a placement with nodes on buckets 0..len(nodes)-1 in ID
// order, so that the same set gives the same placement whatever the order
// of the slice. The error wraps kolco.ErrBadNodeID, kolco.ErrDuplicateNode
// or kolco.ErrBadWeight (also for any weight other than 1 or 0: JumpBackHash
// has no weights). An empty set is allowed: lookups then fail with
// kolco.ErrNoNodes until nodes are added.
func New(nodes []kolco.Node, cfg Config) (*Placement, error) {
	p, err := memento.New("jumpback", nodes, cfg.Hash, Bucket)
	if err != nil {
		return nil, err
	}
	return &Placement{p}, nil
}

// Restore returns the placement over nodes in the state that
// [Placement.MarshalState] wrote, in this process or another: it places
// every key as the placement that wrote the state, and changes as it would.
// An empty state gives the placement of [New]. The error wraps
// kolco.ErrBadState for a state that is not one of jumpback's over these
// nodes, or is an error of New.
func Restore(nodes []kolco.Node, cfg Config, state []byte) (*Placement, error) {
	p, err := memento.Restore("jumpback", nodes, cfg.Hash, Bucket, state)
	if err != nil {
		return nil, err
	}
	return &Placement{p}, nil
}

// MarshalState returns the state that decides placement besides the node
// set: the bucket array's size, the removed buckets in the order of their
// removal and the node on each working bucket, in a canonical, versioned
// encoding that [Restore] reads.
func (j *Placement) MarshalState() []byte { return j.p.MarshalState() }

// AppendIdentity appends the placement's identity for kolco.Fingerprint:
// the key hash by name and the state. The error wraps kolco.ErrBadConfig
// for a key hash that keyhash does not name.
func (j *Placement) AppendIdentity(dst []byte) ([]byte, error) { return j.p.AppendIdentity(dst) }

// Locate returns the owner of key. The error is kolco.ErrNoNodes when the
// placement has no nodes.
func (j *Placement) Locate(key string) (*kolco.Node, error) { return j.p.Locate(key) }

var (
	_ kolco.IDLocator      = (*Placement)(nil)
	_ kolco.IndexLocator   = (*Placement)(nil)
	_ kolco.StateMarshaler = (*Placement)(nil)
	_ kolco.Identity       = (*Placement)(nil)
)

// LocateID returns the ID of the owner of key. The error is kolco.ErrNoNodes
// when the placement has no nodes.
func (j *Placement) LocateID(key string) (string, error) { return j.p.LocateID(key) }

// LocateIndex returns the position in [Placement.Nodes] of the owner of
// key. The error is kolco.ErrNoNodes, with -1, when the placement has no
// nodes.
func (j *Placement) LocateIndex(key string) (int, error) { return j.p.LocateIndex(key) }

// LocateN appends up to n distinct owners of key to dst: the owner, then
// the node that would own the key if the owner were removed, then the one
// that would own it if both were removed, and so on. When n exceeds the
// number of nodes every node is appended once. The error is
// kolco.ErrBadCount when n < 1 and kolco.ErrNoNodes without nodes.
func (j *Placement) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	return j.p.LocateN(dst, key, n)
}

// Nodes returns a copy of the node set, sorted by ID.
func (j *Placement) Nodes() []kolco.Node { return j.p.Nodes() }

// Buckets returns the size of the bucket array, removed buckets included,
// and the number of working buckets (the node count).
func (j *Placement) Buckets() (total, working int) { return j.p.Buckets() }

// Apply makes the change c, all of it or, on error, none: it removes the
// nodes one at a time in the order given, then adds nodes one at a time in
// the order given, each taking the most recently removed bucket or, if
// none is removed, a new bucket at the end. The error wraps
// kolco.ErrUnknownNode, kolco.ErrDuplicateNode, kolco.ErrBadNodeID or
// kolco.ErrBadWeight (any weight other than 1).
func (j *Placement) Apply(c kolco.Change) error { return j.p.Apply(c) }

// Add adds nodes one at a time in the order given, each taking the most
// recently removed bucket or, if none is removed, a new bucket at the end.
// The error wraps kolco.ErrDuplicateNode, kolco.ErrBadNodeID or
// kolco.ErrBadWeight; on error nothing changes.
func (j *Placement) Add(nodes ...kolco.Node) error { return j.p.Add(nodes...) }

// Remove removes the nodes with the given IDs one at a time in the order
// given. The error wraps kolco.ErrUnknownNode; on error nothing changes.
func (j *Placement) Remove(ids ...string) error { return j.p.Remove(ids...) }

// Reweight accepts only weight 1, which changes nothing. The error wraps
// kolco.ErrUnknownNode, or kolco.ErrBadWeight for any other weight.
func (j *Placement) Reweight(id string, weight float64) error { return j.p.Reweight(id, weight) }
