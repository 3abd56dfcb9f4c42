package memento

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
	"github.com/kolco-dev/kolco/keyhash"
)

// BucketFunc maps a 64-bit key hash to a bucket in [0, buckets), moving a
// key from bucket b < n only to bucket n when buckets grows from n to n+1.
// buckets is at least 1.
type BucketFunc func(key uint64, buckets int) int

// Spec is what a MementoHash placement runs on.
type Spec struct {
	// Name prefixes the placement's errors and tags its state.
	Name string
	// Hash is the key hash, by a name keyhash knows for the identity.
	// Nil means keyhash.XXH3.
	Hash keyhash.Func
	// Finalize passes a weak Hash (fnv1a, crc32) through
	// keyhash.Finalized before Bucket, for a bucket function that reads
	// the low bits of the key hash as they are.
	Finalize bool
	// Bucket maps a key hash to a bucket.
	Bucket BucketFunc
}

// Placement is a MementoHash placement over a bucket function. It is safe
// for concurrent use. The zero value is not usable; call [New].
type Placement struct {
	named  keyhash.Func // Spec.Hash, for the identity
	hash   keyhash.Func // named, finalized if Spec.Finalize
	bucket BucketFunc
	m      nodeset.Engine[state]
}

var (
	_ kolco.Placement      = (*Placement)(nil)
	_ kolco.IDLocator      = (*Placement)(nil)
	_ kolco.IndexLocator   = (*Placement)(nil)
	_ kolco.Mutable        = (*Placement)(nil)
	_ kolco.StateMarshaler = (*Placement)(nil)
	_ kolco.Identity       = (*Placement)(nil)
)

// New returns the placement of spec with nodes on buckets
// 0..len(nodes)-1 in ID order. The error wraps kolco.ErrBadNodeID,
// kolco.ErrDuplicateNode or kolco.ErrBadWeight (for any weight but 1).
func New(spec Spec, nodes []kolco.Node) (*Placement, error) {
	if spec.Hash == nil {
		spec.Hash = keyhash.XXH3
	}
	p := &Placement{named: spec.Hash, hash: spec.Hash, bucket: spec.Bucket}
	if spec.Finalize {
		p.hash = keyhash.Finalized(spec.Hash)
	}
	p.m = nodeset.Engine[state]{
		Name:       spec.Name,
		Unweighted: true,
		Set:        func(s *state) nodeset.Set { return s.set },
		Next:       next,
	}
	if err := p.m.Init(&state{}, nodes); err != nil {
		return nil, err
	}
	return p, nil
}

// Locate returns the owner of key, or kolco.ErrNoNodes.
func (p *Placement) Locate(key string) (*kolco.Node, error) {
	if n, _ := p.find(key); n != nil {
		return n, nil
	}
	return nil, kolco.ErrNoNodes
}

// LocateID returns the ID of the owner of key, or kolco.ErrNoNodes.
func (p *Placement) LocateID(key string) (string, error) {
	if n, _ := p.find(key); n != nil {
		return n.ID, nil
	}
	return "", kolco.ErrNoNodes
}

// LocateIndex returns the position of the owner of key in Nodes, or -1 and
// kolco.ErrNoNodes.
func (p *Placement) LocateIndex(key string) (int, error) {
	if _, i := p.find(key); i >= 0 {
		return i, nil
	}
	return -1, kolco.ErrNoNodes
}

// find returns the owner of key in the current state and its index in
// the state's node set, or nil and -1 without nodes.
func (p *Placement) find(key string) (*kolco.Node, int) {
	s := p.m.Load()
	if s.working == 0 {
		return nil, -1
	}
	// A working bucket's index answers at once: one array read, where
	// the replacer's test would read a second array first.
	kh := p.hash(key)
	b := p.bucket(kh, len(s.ids))
	i := int(s.idx[b])
	if i < 0 {
		i = int(s.idx[s.walk(kh, b, nil)])
	}
	return &s.nodes[i], i
}

// LocateN appends up to n owners: each the owner the key would have if the
// ones before it were removed in turn.
func (p *Placement) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	if n < 1 {
		return dst, fmt.Errorf("%w (got %d)", kolco.ErrBadCount, n)
	}
	s := p.m.Load()
	if s.working == 0 {
		return dst, kolco.ErrNoNodes
	}
	kh := p.hash(key)
	start := len(dst)
	// size is the bucket array as the removal of the owners so far would
	// leave it: it shrinks while each owner is on its last bucket and no
	// bucket is removed, as state.remove does.
	size, shrinking := len(s.ids), s.shrinks(len(s.ids)-1)
	for range min(n, s.working) {
		b := s.locate(p.bucket, kh, size, dst[start:])
		dst = append(dst, s.nodes[s.idx[b]])
		if shrinking = shrinking && b == size-1; shrinking {
			size--
		}
	}
	return dst, nil
}

// Nodes returns a copy of the members, sorted by ID.
func (p *Placement) Nodes() []kolco.Node { return p.m.Load().set.Nodes() }

// Buckets returns the size of the bucket array (working and removed) and
// the number of working buckets.
func (p *Placement) Buckets() (total, working int) {
	s := p.m.Load()
	return len(s.ids), s.working
}

// Apply makes the change c: it removes nodes one by one in the order
// given, then adds nodes one by one in the order given, each taking the
// most recently removed bucket. The error wraps kolco.ErrUnknownNode,
// kolco.ErrDuplicateNode, kolco.ErrBadNodeID or kolco.ErrBadWeight.
func (p *Placement) Apply(c kolco.Change) error { return p.m.Apply(c) }

// Add is Apply(kolco.Change{Add: nodes}).
func (p *Placement) Add(nodes ...kolco.Node) error { return p.m.Add(nodes...) }

// Remove is Apply(kolco.Change{Remove: ids}).
func (p *Placement) Remove(ids ...string) error { return p.m.Remove(ids...) }

// Reweight accepts only weight 1 for a member, which changes nothing. The
// error wraps kolco.ErrUnknownNode or kolco.ErrBadWeight.
func (p *Placement) Reweight(id string, weight float64) error { return p.m.Reweight(id, weight) }

// next applies d to a copy of old: removals, then additions, each in the
// order the change gives them.
func next(old *state, d nodeset.Delta) (*state, error) {
	s := old.clone()
	for _, n := range d.Removed {
		s.remove(n.ID)
	}
	for _, n := range d.Added {
		s.add(n.ID)
	}
	s.reindex(d.New)
	return s, nil
}
