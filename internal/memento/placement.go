package memento

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
	"github.com/kolco-dev/kolco/keyhash"
)

// BucketFunc maps a 64-bit key hash to a bucket in [0, buckets), moving a
// key from bucket b < n only to bucket n when buckets grows from n to n+1.
// buckets is at least 1.
type BucketFunc func(key uint64, buckets int) int

// Placement is a MementoHash placement over a bucket function. It is safe
// for concurrent use. The zero value is not usable; call [New].
type Placement struct {
	hash   keyhash.Func
	bucket BucketFunc
	mu     sync.Mutex // serializes writers
	st     atomic.Pointer[state]
}

// New returns a placement with nodes on buckets 0..len(nodes)-1 in ID
// order. The error wraps kolco.ErrBadNodeID, kolco.ErrDuplicateNode or
// kolco.ErrBadWeight (for any weight but 1).
func New(nodes []kolco.Node, hash keyhash.Func, bucket BucketFunc) (*Placement, error) {
	if err := checkWeights(nodes); err != nil {
		return nil, err
	}
	set, err := nodeset.New(nodes)
	if err != nil {
		return nil, err
	}
	if hash == nil {
		hash = keyhash.XXH3
	}
	p := &Placement{hash: hash, bucket: bucket}
	p.st.Store(newState(set))
	return p, nil
}

// Locate returns the owner of key, or kolco.ErrNoNodes.
func (p *Placement) Locate(key string) (kolco.Node, error) {
	if n := p.lookup(key); n != nil {
		return *n, nil
	}
	return kolco.Node{}, kolco.ErrNoNodes
}

// LocateID returns the ID of the owner of key, or kolco.ErrNoNodes.
func (p *Placement) LocateID(key string) (string, error) {
	if n := p.lookup(key); n != nil {
		return n.ID, nil
	}
	return "", kolco.ErrNoNodes
}

// lookup returns the owner of key, or nil without nodes.
func (p *Placement) lookup(key string) *kolco.Node {
	s := p.st.Load()
	if s.working == 0 {
		return nil
	}
	return &s.owners[s.locate(p.bucket, p.hash(key), nil)]
}

// LocateN appends up to n owners: each the owner the key would have if the
// ones before it were removed in turn.
func (p *Placement) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	if n < 1 {
		return dst, fmt.Errorf("%w (got %d)", kolco.ErrBadCount, n)
	}
	s := p.st.Load()
	if s.working == 0 {
		return dst, kolco.ErrNoNodes
	}
	kh := p.hash(key)
	start := len(dst)
	for range min(n, s.working) {
		dst = append(dst, s.owners[s.locate(p.bucket, kh, dst[start:])])
	}
	return dst, nil
}

// Nodes returns a copy of the members, sorted by ID.
func (p *Placement) Nodes() []kolco.Node { return p.st.Load().set.Nodes() }

// Buckets returns the size of the bucket array (working and removed) and
// the number of working buckets.
func (p *Placement) Buckets() (total, working int) {
	s := p.st.Load()
	return len(s.owners), s.working
}

// Add adds nodes one by one, in the order given.
func (p *Placement) Add(nodes ...kolco.Node) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.st.Load()
	if err := checkWeights(nodes); err != nil {
		return err
	}
	set, err := s.set.Add(nodes...)
	if err != nil {
		return err
	}
	c := s.clone()
	c.set = set
	for _, n := range nodes {
		c.add(n)
	}
	p.st.Store(c)
	return nil
}

// Remove removes nodes one by one, in the order given.
func (p *Placement) Remove(ids ...string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.st.Load()
	set, err := s.set.Remove(ids...)
	if err != nil {
		return err
	}
	c := s.clone()
	c.set = set
	for _, id := range ids {
		c.remove(id)
	}
	p.st.Store(c)
	return nil
}

// Reweight accepts only weight 1 for a member.
func (p *Placement) Reweight(id string, weight float64) error {
	if err := kolco.CheckWeight(weight); err != nil {
		return fmt.Errorf("node %q: %w", id, err)
	}
	if !p.st.Load().set.Has(id) {
		return fmt.Errorf("%w: %q", kolco.ErrUnknownNode, id)
	}
	return checkWeights([]kolco.Node{{ID: id, Weight: weight}})
}
