package dx

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
	"github.com/kolco-dev/kolco/keyhash"
)

// ErrCapacity is returned when a node set would exceed the fixed capacity.
// It wraps [kolco.ErrBadConfig], so code that only knows the root sentinels
// still classifies it.
var ErrCapacity = fmt.Errorf("dx: capacity exceeded (%w)", kolco.ErrBadConfig)

// MinCapacity is the smallest default capacity.
const MinCapacity = 16

// MaxCapacity bounds [Config.Capacity]: each slot costs 4 bytes of state
// (8 with weights) and a lookup scans up to 4 x Capacity slots in the worst
// case.
const MaxCapacity = 1 << 26

// Config sets up a [Placement]. The zero value means the documented
// defaults.
type Config struct {
	// Capacity is the number of slots, a power of two: the most nodes the
	// set can hold at once. It cannot change later. Zero means the
	// smallest power of two at or above twice the initial node count, and
	// at least [MinCapacity]: room to double, with lookups that stay short
	// (Capacity/nodes probes on average).
	Capacity int
	// Hash hashes keys. Nil means [keyhash.XXH3]. The generator is linear
	// in the key hash's bits, so a weak hash (keyhash.FNV1a,
	// keyhash.CRC32) is finalized with keyhash.Finalized first.
	Hash keyhash.Func
}

// Placement is a DxHash placement. It implements [kolco.Placement],
// [kolco.Mutable], [kolco.IDLocator], [kolco.IndexLocator],
// [kolco.StateMarshaler] and [kolco.Identity]. Lookups take no lock and do
// not allocate; each change copies the O(Capacity) state, changes the copy
// and publishes it atomically.
type Placement struct {
	named keyhash.Func // Config.Hash, defaults filled in
	hash  keyhash.Func // named, finalized
	m     nodeset.Engine[state]
}

var (
	_ kolco.Placement      = (*Placement)(nil)
	_ kolco.Mutable        = (*Placement)(nil)
	_ kolco.IDLocator      = (*Placement)(nil)
	_ kolco.IndexLocator   = (*Placement)(nil)
	_ kolco.StateMarshaler = (*Placement)(nil)
	_ kolco.Identity       = (*Placement)(nil)
)

// always is the acceptance threshold of a node of the top weight: every
// 32-bit draw is below it, and no draw is made.
const always = 1 << 32

// state is one immutable version of the slot array. Lookups read slot,
// accept and nodes; ids, free and top are the writers' bookkeeping.
type state struct {
	set    nodeset.Set
	nodes  []kolco.Node // set.View(), sorted by ID
	slot   []int32      // index in nodes per slot, -1 for an inactive slot
	accept []uint64     // per slot, weight/top scaled to 2^32; nil when all are always
	ids    []string     // node ID per slot, "" for an inactive slot
	free   []int32      // inactive slots; the next add takes the last
	top    float64      // the largest weight ever held: accepted always
}

// New returns a placement of cfg.Capacity slots holding nodes, which get
// slots 0, 1, ... in ID order, so the result does not depend on the order
// of nodes. The error wraps [ErrCapacity] when nodes exceed the capacity,
// [kolco.ErrBadConfig] for a capacity that is not a power of two in
// [1, MaxCapacity], or [kolco.ErrDuplicateNode], [kolco.ErrBadNodeID] or
// [kolco.ErrBadWeight].
func New(nodes []kolco.Node, cfg Config) (*Placement, error) {
	capacity := cfg.Capacity
	if capacity == 0 {
		capacity = max(1<<bits.Len(uint(max(2*len(nodes), 1)-1)), MinCapacity)
	}
	if capacity < 1 || capacity > MaxCapacity || capacity&(capacity-1) != 0 {
		return nil, fmt.Errorf("dx: %w: capacity %d is not a power of two in [1, %d]", kolco.ErrBadConfig, cfg.Capacity, MaxCapacity)
	}
	if cfg.Hash == nil {
		cfg.Hash = keyhash.XXH3
	}
	p := &Placement{named: cfg.Hash, hash: keyhash.Finalized(cfg.Hash)}
	p.m = nodeset.Engine[state]{
		Name: "dx",
		Set:  func(s *state) nodeset.Set { return s.set },
		Next: next,
	}
	if err := p.m.Init(emptyState(capacity), nodes); err != nil {
		return nil, err
	}
	return p, nil
}

// emptyState has every slot inactive, stacked so that adding nodes in ID
// order gives node i slot i.
func emptyState(capacity int) *state {
	s := &state{slot: make([]int32, capacity), ids: make([]string, capacity), top: 1}
	for b := capacity - 1; b >= 0; b-- {
		s.slot[b] = -1
		s.free = append(s.free, int32(b))
	}
	return s
}

// next applies d to a copy of old: the removed nodes' slots go inactive in
// ID order, then the added nodes take the most recently freed slots in ID
// order. The error wraps [ErrCapacity] when the nodes would exceed the
// capacity.
func next(old *state, d nodeset.Delta) (*state, error) {
	if free := len(old.free) + len(d.Removed); len(d.Added) > free {
		return nil, fmt.Errorf("add %d nodes to %d of %d: %w", len(d.Added), old.set.Len()-len(d.Removed), len(old.slot), ErrCapacity)
	}
	s := &state{ids: slices.Clone(old.ids), free: slices.Clone(old.free), top: old.top}
	at := make(map[string]int32, old.set.Len())
	for b, id := range s.ids {
		if id != "" {
			at[id] = int32(b)
		}
	}
	for _, n := range nodeset.SortedByID(d.Removed) {
		b := at[n.ID]
		s.ids[b] = ""
		s.free = append(s.free, b)
	}
	for _, n := range nodeset.SortedByID(d.Added) {
		b := s.free[len(s.free)-1]
		s.free = s.free[:len(s.free)-1]
		s.ids[b] = n.ID
	}
	s.index(d.New)
	return s, nil
}

// index points every active slot at its node in set, raises top to the
// largest weight, and sets the acceptance thresholds.
func (s *state) index(set nodeset.Set) {
	s.set, s.nodes = set, set.View()
	for _, n := range s.nodes {
		s.top = max(s.top, n.EffectiveWeight())
	}
	s.slot = make([]int32, len(s.ids))
	s.accept = nil
	for b, id := range s.ids {
		s.slot[b] = -1
		if id == "" {
			continue
		}
		i, _ := set.Index(id)
		s.slot[b] = int32(i)
		if t := threshold(s.nodes[i].EffectiveWeight(), s.top); t != always {
			if s.accept == nil {
				s.accept = make([]uint64, len(s.ids))
				for j := range s.accept {
					s.accept[j] = always
				}
			}
			s.accept[b] = t
		}
	}
}

// threshold returns the acceptance threshold of weight w when top is
// accepted always: w/top of the 32-bit draws, at least one.
func threshold(w, top float64) uint64 {
	if w >= top {
		return always
	}
	return max(1, uint64(math.Ldexp(w/top, 32)))
}

// Capacity returns the number of slots.
func (p *Placement) Capacity() int { return len(p.m.Load().slot) }

// Nodes returns a copy of the node set, sorted by ID.
func (p *Placement) Nodes() []kolco.Node { return p.m.Load().set.Nodes() }

// Apply makes the change c, all of it or, on error, none: the removed
// nodes' slots go inactive in ID order, then the added nodes take the most
// recently freed slots in ID order, then weights change (see the package
// documentation). The error wraps [ErrCapacity], [kolco.ErrUnknownNode],
// [kolco.ErrDuplicateNode], [kolco.ErrBadNodeID] or [kolco.ErrBadWeight].
func (p *Placement) Apply(c kolco.Change) error { return p.m.Apply(c) }

// Add adds nodes, in ID order, each taking the most recently freed slot.
// Adding a node no heavier than the heaviest ever held moves keys only
// onto it. The error wraps [ErrCapacity], [kolco.ErrDuplicateNode],
// [kolco.ErrBadNodeID] or [kolco.ErrBadWeight].
func (p *Placement) Add(nodes ...kolco.Node) error { return p.m.Add(nodes...) }

// Remove removes the nodes with the given IDs. Only their keys move. The
// error wraps [kolco.ErrUnknownNode].
func (p *Placement) Remove(ids ...string) error { return p.m.Remove(ids...) }

// Reweight sets the weight of one node. Up to the heaviest weight ever
// held, keys move only onto the node (heavier) or off it (lighter). The
// error wraps [kolco.ErrUnknownNode] or [kolco.ErrBadWeight].
func (p *Placement) Reweight(id string, weight float64) error { return p.m.Reweight(id, weight) }
