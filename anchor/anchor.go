package anchor

import (
	"fmt"
	"slices"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
	"github.com/kolco-dev/kolco/keyhash"
)

// ErrCapacity is returned when a node set would exceed the fixed capacity.
// It wraps [kolco.ErrBadConfig], so code that only knows the root sentinels
// still classifies it.
var ErrCapacity = fmt.Errorf("anchor: capacity exceeded (%w)", kolco.ErrBadConfig)

// MinCapacity is the smallest default capacity.
const MinCapacity = 16

// MaxCapacity bounds [Config.Capacity]: each bucket costs 16 bytes of state.
const MaxCapacity = 1 << 24

// Config sets up a [Placement]. The zero value means the documented defaults.
type Config struct {
	// Capacity is the number of buckets, the most nodes the set can ever
	// hold at once; it cannot change later. Zero means twice the initial
	// node count, and at least [MinCapacity]: room to double, with lookups
	// that stay short (about 1 + ln(Capacity/nodes) hops).
	Capacity int
	// Hash hashes keys. Nil means [keyhash.XXH3]. A bucket is taken from
	// the top bits of the hash (a multiply-shift reduction), so a weak hash
	// (keyhash.FNV1a, keyhash.CRC32) is finalized with keyhash.Finalized:
	// crc32's values, zero-extended from 32 bits, would put every key on
	// bucket 0.
	Hash keyhash.Func
}

// Placement is an AnchorHash placement. It implements [kolco.Placement] and
// [kolco.Mutable]. Lookups take no lock and do not allocate; each change
// copies the O(Capacity) state, changes the copy and publishes it
// atomically.
type Placement struct {
	named keyhash.Func // Config.Hash, defaults filled in
	hash  keyhash.Func // named, finalized
	m     nodeset.Engine[state]
}

// state is one immutable version of the anchor. The lookup reads a, k,
// byBucket and nodes; w, l, r and bucket are the writers' bookkeeping.
type state struct {
	set      nodeset.Set
	nodes    []kolco.Node // set.View(), sorted by ID
	byBucket []int32      // bucket -> index in nodes, -1 for a removed bucket
	a        []uint32     // A: 0 for a working bucket, else |W_b|
	k        []uint32     // K: successor of a bucket in the removal order
	w, l     []uint32     // W (working buckets in order) and L (location in W)
	r        []uint32     // R: stack of removed buckets
	n        uint32       // N: number of working buckets
	bucket   map[string]uint32
}

var (
	_ kolco.Placement    = (*Placement)(nil)
	_ kolco.Mutable      = (*Placement)(nil)
	_ kolco.IDLocator    = (*Placement)(nil)
	_ kolco.IndexLocator = (*Placement)(nil)
)

// New returns an anchor of cfg.Capacity buckets holding nodes, which get
// buckets 0, 1, ... in ID order, so the result does not depend on the order
// of nodes. The error wraps [ErrCapacity] when nodes exceed the capacity,
// [kolco.ErrBadConfig] for a capacity out of range, [kolco.ErrBadWeight]
// for a weight other than 1, or [kolco.ErrDuplicateNode] or
// [kolco.ErrBadNodeID].
func New(nodes []kolco.Node, cfg Config) (*Placement, error) {
	capacity := cfg.Capacity
	if capacity == 0 {
		capacity = max(2*len(nodes), MinCapacity)
	}
	if capacity < 1 || capacity > MaxCapacity {
		return nil, fmt.Errorf("%w: capacity %d outside [1, %d]", kolco.ErrBadConfig, cfg.Capacity, MaxCapacity)
	}
	if cfg.Hash == nil {
		cfg.Hash = keyhash.XXH3
	}
	h := &Placement{named: cfg.Hash, hash: keyhash.Finalized(cfg.Hash)}
	h.m = nodeset.Engine[state]{
		Name:       "anchor",
		Unweighted: true,
		Set:        func(s *state) nodeset.Set { return s.set },
		Next:       next,
	}
	if err := h.m.Init(emptyState(capacity), nodes); err != nil {
		return nil, err
	}
	return h, nil
}

// emptyState is INITANCHOR(capacity, 0): every bucket removed, the highest
// first, so that adding nodes in ID order gives node i bucket i, exactly
// the paper's INITANCHOR(capacity, n).
func emptyState(capacity int) *state {
	s := &state{
		byBucket: make([]int32, capacity),
		a:        make([]uint32, capacity),
		k:        make([]uint32, capacity),
		w:        make([]uint32, capacity),
		l:        make([]uint32, capacity),
		bucket:   make(map[string]uint32),
	}
	for b := range capacity {
		s.k[b], s.l[b], s.w[b] = uint32(b), uint32(b), uint32(b)
		s.byBucket[b] = -1
	}
	for b := capacity - 1; b >= 0; b-- {
		s.r = append(s.r, uint32(b))
		s.a[b] = uint32(b)
	}
	return s
}

// next applies d to a copy of old: the removed nodes' buckets are removed
// in ID order, then the added nodes revive the most recently removed
// buckets in ID order. The error wraps [ErrCapacity] when the working
// buckets would exceed the capacity.
func next(old *state, d nodeset.Delta) (*state, error) {
	if free := len(old.r) + len(d.Removed); len(d.Added) > free {
		return nil, fmt.Errorf("add %d nodes to %d of %d: %w", len(d.Added), int(old.n)-len(d.Removed), len(old.a), ErrCapacity)
	}
	s := old.clone()
	for _, nd := range nodeset.SortedByID(d.Removed) {
		s.removeBucket(s.bucket[nd.ID])
		delete(s.bucket, nd.ID)
	}
	for _, nd := range nodeset.SortedByID(d.Added) {
		s.bucket[nd.ID] = s.addBucket()
	}
	s.set, s.nodes = d.New, d.New.View()
	s.reindex()
	return s, nil
}

// clone returns a deep copy for a writer to change.
func (s *state) clone() *state {
	c := *s
	c.byBucket = slices.Clone(s.byBucket)
	c.a, c.k = slices.Clone(s.a), slices.Clone(s.k)
	c.w, c.l, c.r = slices.Clone(s.w), slices.Clone(s.l), slices.Clone(s.r)
	c.bucket = make(map[string]uint32, len(s.bucket))
	for id, b := range s.bucket {
		c.bucket[id] = b
	}
	return &c
}

// removeBucket is REMOVEBUCKET(b) of the paper's Algorithm 3.
func (s *state) removeBucket(b uint32) {
	s.r = append(s.r, b)
	s.n--
	s.a[b] = s.n
	last := s.w[s.n]
	s.w[s.l[b]] = last
	s.k[b] = last
	s.l[last] = s.l[b]
}

// addBucket is ADDBUCKET() of the paper's Algorithm 3: it revives the most
// recently removed bucket.
func (s *state) addBucket() uint32 {
	b := s.r[len(s.r)-1]
	s.r = s.r[:len(s.r)-1]
	s.a[b] = 0
	s.l[s.w[s.n]] = s.n
	s.w[s.l[b]] = b
	s.k[b] = b
	s.n++
	return b
}

// reindex rebuilds byBucket after nodes changed.
func (s *state) reindex() {
	for b := range s.byBucket {
		s.byBucket[b] = -1
	}
	for i, nd := range s.nodes {
		s.byBucket[s.bucket[nd.ID]] = int32(i)
	}
}

// Capacity returns the number of buckets.
func (h *Placement) Capacity() int { return len(h.m.Load().a) }

// Nodes returns a copy of the node set, sorted by ID.
func (h *Placement) Nodes() []kolco.Node { return h.m.Load().set.Nodes() }

// Apply makes the change c, all of it or, on error, none: the removed
// nodes' buckets are removed in ID order, then the added nodes revive the
// most recently removed buckets in ID order (see the package documentation
// on history). The error wraps [ErrCapacity], [kolco.ErrUnknownNode],
// [kolco.ErrDuplicateNode], [kolco.ErrBadNodeID] or [kolco.ErrBadWeight]
// (any weight other than 1).
func (h *Placement) Apply(c kolco.Change) error { return h.m.Apply(c) }

// Add adds nodes, in ID order, each reviving the most recently removed
// bucket (see the package documentation on history). Adding moves keys
// only onto the new nodes. The error wraps [ErrCapacity],
// [kolco.ErrDuplicateNode], [kolco.ErrBadNodeID] or [kolco.ErrBadWeight].
func (h *Placement) Add(nodes ...kolco.Node) error { return h.m.Add(nodes...) }

// Remove removes the nodes with the given IDs, in ID order. Only their keys
// move. The error wraps [kolco.ErrUnknownNode].
func (h *Placement) Remove(ids ...string) error { return h.m.Remove(ids...) }

// Reweight accepts only weight 1, which changes nothing: AnchorHash is
// unweighted. The error wraps [kolco.ErrUnknownNode] or [kolco.ErrBadWeight].
func (h *Placement) Reweight(id string, weight float64) error { return h.m.Reweight(id, weight) }
