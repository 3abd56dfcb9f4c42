package jumpbackanchor

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
	"github.com/kolco-dev/kolco/keyhash"
)

// Config holds the settings of a [Placement]. The zero value means the
// documented defaults.
type Config struct {
	// Hash turns a key into the 64-bit seed of the SplitMix64 generator
	// that JumpBackHash draws from. Nil means keyhash.XXH3. The
	// generator mixes the seed before its first output, so every hash of
	// package keyhash, crc32's 32 bits included, spreads keys evenly.
	Hash keyhash.Func
}

// Placement places keys on nodes with JumpBackAnchorHash. It is safe for
// concurrent use: lookups take no lock and allocate nothing, and each
// change copies the O(buckets) state, changes the copy and publishes it
// atomically.
type Placement struct {
	hash keyhash.Func
	m    nodeset.Engine[state]
}

var (
	_ kolco.Placement      = (*Placement)(nil)
	_ kolco.IDLocator      = (*Placement)(nil)
	_ kolco.IndexLocator   = (*Placement)(nil)
	_ kolco.Mutable        = (*Placement)(nil)
	_ kolco.StateMarshaler = (*Placement)(nil)
	_ kolco.Identity       = (*Placement)(nil)
)

// state is one immutable version of the placement.
type state struct {
	buckets
	ids   []string     // node ID per bucket below size; "" for a removed one
	owner []int32      // index in nodes per bucket; -1 for a removed one
	set   nodeset.Set  // the members, sorted by ID
	nodes []kolco.Node // set.View()
}

// New returns a placement with nodes on buckets 0..len(nodes)-1 in ID
// order, so that the same set gives the same placement whatever the order
// of the slice. The error wraps kolco.ErrBadNodeID, kolco.ErrDuplicateNode
// or kolco.ErrBadWeight (also for any weight other than 1 or 0:
// JumpBackAnchorHash has no weights). An empty set is allowed: lookups then
// fail with kolco.ErrNoNodes until nodes are added.
func New(nodes []kolco.Node, cfg Config) (*Placement, error) { return Restore(nodes, cfg, nil) }

func newEmpty(cfg Config) *Placement {
	if cfg.Hash == nil {
		cfg.Hash = keyhash.XXH3
	}
	p := &Placement{hash: cfg.Hash}
	p.m = nodeset.Engine[state]{
		Name:       "jumpbackanchor",
		Unweighted: true,
		Set:        func(s *state) nodeset.Set { return s.set },
		Next:       next,
	}
	return p
}

// Locate returns the node that owns key. The error is kolco.ErrNoNodes
// when the placement has no nodes.
func (p *Placement) Locate(key string) (*kolco.Node, error) {
	if n, _ := p.find(key); n != nil {
		return n, nil
	}
	return nil, kolco.ErrNoNodes
}

// LocateID returns the ID of the node Locate returns. The error is
// kolco.ErrNoNodes when the placement has no nodes.
func (p *Placement) LocateID(key string) (string, error) {
	if n, _ := p.find(key); n != nil {
		return n.ID, nil
	}
	return "", kolco.ErrNoNodes
}

// LocateIndex returns the position in Nodes of the node Locate returns.
// The error is kolco.ErrNoNodes, with -1, when the placement has no nodes.
func (p *Placement) LocateIndex(key string) (int, error) {
	if _, i := p.find(key); i >= 0 {
		return i, nil
	}
	return -1, kolco.ErrNoNodes
}

// find returns the owner of key in the current state and its index in the
// state's node set, or nil and -1 without nodes.
func (p *Placement) find(key string) (*kolco.Node, int) {
	s := p.m.Load()
	if s.working() == 0 {
		return nil, -1
	}
	i := int(s.owner[s.bucket(p.hash(key))])
	return &s.nodes[i], i
}

// maxFixedReplicas is how many owners LocateN finds with its simulated
// removals in a fixed array on the stack; past it the array is a slice
// that grows on the heap.
const maxFixedReplicas = 64

// LocateN appends up to n distinct owners of key to dst: the owner, then
// the node that would own the key if the owner were removed, and so on,
// each removal made as Remove makes it. So replica i+1 is the owner once
// replicas 1..i are removed in order. It allocates nothing for up to 65
// owners. The error is kolco.ErrBadCount when n < 1 and kolco.ErrNoNodes
// when the placement has no nodes.
func (p *Placement) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	if n < 1 {
		return dst, fmt.Errorf("%w (got %d)", kolco.ErrBadCount, n)
	}
	s := p.m.Load()
	if s.working() == 0 {
		return dst, kolco.ErrNoNodes
	}
	kh := p.hash(key)
	var fixed [maxFixedReplicas]moved
	f := failover{s: &s.buckets, size: s.size, removed: len(s.removed), extra: fixed[:0]}
	for i := range min(n, s.working()) {
		b := f.bucket(kh)
		dst = append(dst, s.nodes[s.owner[b]])
		if i+1 < min(n, s.working()) {
			if m, stacked := f.remove(b); stacked {
				f.extra = append(f.extra, m)
			}
		}
	}
	return dst, nil
}

// Nodes returns a copy of the node set, sorted by ID.
func (p *Placement) Nodes() []kolco.Node { return p.m.Load().set.Nodes() }

// Buckets returns the number of buckets, removed ones included, and the
// number of working buckets (the node count).
func (p *Placement) Buckets() (total, working int) {
	s := p.m.Load()
	return s.size, s.working()
}

// Apply makes the change c, all of it or, on error, none: it removes
// nodes one at a time in the order given, then adds nodes one at a time
// in the order given, each taking the most recently removed bucket or, if
// none is removed, a new bucket at the end. The error wraps
// kolco.ErrUnknownNode, kolco.ErrDuplicateNode, kolco.ErrBadNodeID or
// kolco.ErrBadWeight (any weight other than 1).
func (p *Placement) Apply(c kolco.Change) error { return p.m.Apply(c) }

// Add is Apply(kolco.Change{Add: nodes}).
func (p *Placement) Add(nodes ...kolco.Node) error { return p.m.Add(nodes...) }

// Remove is Apply(kolco.Change{Remove: ids}).
func (p *Placement) Remove(ids ...string) error { return p.m.Remove(ids...) }

// Reweight accepts only weight 1 for a member, which changes nothing:
// JumpBackAnchorHash has no weights. The error wraps
// kolco.ErrUnknownNode or kolco.ErrBadWeight.
func (p *Placement) Reweight(id string, weight float64) error { return p.m.Reweight(id, weight) }

// next applies d to a copy of old: removals, then additions, each in the
// order the change gives them.
func next(old *state, d nodeset.Delta) (*state, error) {
	s := &state{buckets: old.clone(), ids: append([]string(nil), old.ids...)}
	for _, n := range d.Removed {
		b := 0
		// A linear scan: writers are rare, and a map from ID to bucket
		// would have to be copied on every change.
		for b < len(s.ids) && s.ids[b] != n.ID {
			b++
		}
		s.ids[b] = ""
		s.remove(b)
		s.ids = s.ids[:s.size]
	}
	for _, n := range d.Added {
		b := s.add()
		if b == len(s.ids) {
			s.ids = append(s.ids, n.ID)
		} else {
			s.ids[b] = n.ID
		}
	}
	s.reindex(d.New)
	return s, nil
}

// reindex points every working bucket at its node in set, whose values
// (address, zone) a change may have updated.
func (s *state) reindex(set nodeset.Set) {
	s.set, s.nodes = set, set.View()
	s.owner = make([]int32, s.size)
	for b, id := range s.ids {
		s.owner[b] = -1
		if id != "" {
			i, _ := set.Index(id)
			s.owner[b] = int32(i)
		}
	}
}
