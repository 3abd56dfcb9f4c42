package slots

import (
	"fmt"
	"slices"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
	"github.com/kolco-dev/kolco/keyhash"
)

// DefaultCount is the number of slots of a Redis Cluster and of a [Map]
// whose [Config.Count] is zero.
const DefaultCount = 16384

// MaxCount is the largest slot count: CRC16 has 16 bits.
const MaxCount = 1 << 16

// ErrSlotMap is returned by [FromRanges] for ranges that do not cover every
// slot exactly once or that lie outside the slot space, and by [Map.Owner]
// for a slot out of range. It wraps [kolco.ErrBadConfig], so code that only
// knows the root sentinels still classifies it.
var ErrSlotMap = fmt.Errorf("slots: invalid slot map (%w)", kolco.ErrBadConfig)

// Config sets up a [Map]. The zero value means the documented defaults.
type Config struct {
	// Count is the number of slots: a power of two from 1 to [MaxCount].
	// Zero means [DefaultCount], as in Redis Cluster; other counts place keys
	// differently from Redis. Fewer slots rebalance faster but split load
	// more coarsely (a node's share is a whole number of slots).
	Count int
	// Hash, when set, replaces CRC16: a key's slot is then the low bits of
	// Hash of its hash tag, finalized with keyhash.Finalized when the hash
	// is weak. Nil means CRC16, as Redis Cluster computes slots.
	Hash keyhash.Func
}

func (c Config) count() (int, error) {
	n := c.Count
	if n == 0 {
		n = DefaultCount
	}
	if n < 1 || n > MaxCount || n&(n-1) != 0 {
		return 0, fmt.Errorf("%w: slot count %d is not a power of two in [1, %d]", kolco.ErrBadConfig, c.Count, MaxCount)
	}
	return n, nil
}

// Map is a hash-slot placement: a key's slot is CRC16 of its hash tag, and
// an explicit table says which node owns each slot. It implements
// [kolco.Placement] and [kolco.Mutable]. Lookups take no lock and do not
// allocate; changes are serialized and published atomically.
type Map struct {
	named keyhash.Func // Config.Hash; nil for CRC16
	hash  keyhash.Func // named, finalized
	m     nodeset.Engine[state]
}

// state is one immutable version of the map.
type state struct {
	set   nodeset.Set
	nodes []kolco.Node // set.View(), sorted by ID
	owner []int32      // slot -> index in nodes; -1 only when nodes is empty
	mask  uint32
	// next[s] is the first slot after s, cyclically, whose owner differs
	// from s's (s itself when one node owns every slot), so that LocateN
	// steps over a run of slots at once: a fresh map has one run per node.
	next []uint32
	runs int // number of runs of equal owners, cyclically
}

// link computes s.next and s.runs from s.owner.
func (s *state) link() *state {
	n := len(s.owner)
	s.next = make([]uint32, n)
	s.runs = 0
	// Walk backwards twice round the circle so that every slot sees the
	// start of the following run.
	nextStart := -1
	for i := 2*n - 1; i >= 0; i-- {
		slot := i % n
		if nxt := (slot + 1) % n; s.owner[nxt] != s.owner[slot] {
			nextStart = nxt
			if i < n {
				s.runs++
			}
		}
		if i < n {
			s.next[slot] = uint32(slot)
			if nextStart >= 0 {
				s.next[slot] = uint32(nextStart)
			}
		}
	}
	s.runs = max(s.runs, 1)
	return s
}

// Move is one slot changing owner, as a rebalance reports it.
type Move struct {
	Slot int    // the slot
	From string // ID of the previous owner
	To   string // ID of the new owner
}

// Range is a run of consecutive slots owned by one node, like a line of
// CLUSTER SLOTS. First and Last are inclusive.
type Range struct {
	First, Last int    // the first and last slot of the run
	ID          string // the owner's node ID
}

var (
	_ kolco.Placement    = (*Map)(nil)
	_ kolco.Mutable      = (*Map)(nil)
	_ kolco.IDLocator    = (*Map)(nil)
	_ kolco.IndexLocator = (*Map)(nil)
)

// New returns a map of nodes in which each node owns a share of the slots
// proportional to its weight (see the package documentation for the
// apportionment), in contiguous runs assigned in ID order, like a fresh
// Redis Cluster. The result does not depend on the order of nodes. The
// error wraps [kolco.ErrBadConfig], [kolco.ErrDuplicateNode],
// [kolco.ErrBadNodeID] or [kolco.ErrBadWeight].
func New(nodes []kolco.Node, cfg Config) (*Map, error) {
	count, err := cfg.count()
	if err != nil {
		return nil, err
	}
	m := newMap(cfg.Hash)
	// Built from the map without nodes, whose slots have no owner, the
	// first change hands out contiguous runs in ID order.
	if err := m.m.Init(emptyState(count), nodes); err != nil {
		return nil, err
	}
	return m, nil
}

// newMap returns a map slotting keys with hash (nil: CRC16) whose engine
// builds each state with plan.
func newMap(hash keyhash.Func) *Map {
	m := &Map{named: hash}
	if hash != nil {
		m.hash = keyhash.Finalized(hash)
	}
	m.m = nodeset.Engine[state]{
		Name: "slots",
		Set:  func(s *state) nodeset.Set { return s.set },
		Next: func(old *state, d nodeset.Delta) (*state, error) { return plan(old, d.New), nil },
	}
	return m
}

// emptyState returns the state of count slots without nodes.
func emptyState(count int) *state {
	s := &state{owner: make([]int32, count), mask: uint32(count - 1)}
	for i := range s.owner {
		s.owner[i] = -1
	}
	return s.link()
}

// FromRanges returns a map with the given explicit slot ownership, such as
// one read from CLUSTER SLOTS. The ranges must cover every slot exactly once
// and name only IDs in nodes (nodes may own no slot); with no nodes there
// must be no ranges. The map is kept as given: it is rebalanced toward the
// weighted shares only by the next change or by [Map.Rebalance]. The error
// wraps [ErrSlotMap], [kolco.ErrUnknownNode] or any error of [New].
func FromRanges(nodes []kolco.Node, ranges []Range, cfg Config) (*Map, error) {
	count, err := cfg.count()
	if err != nil {
		return nil, err
	}
	set, err := nodeset.New(nodes)
	if err != nil {
		return nil, fmt.Errorf("slots: %w", err)
	}
	s := emptyState(count)
	s.set, s.nodes = set, set.View()
	for _, r := range ranges {
		i, ok := set.Index(r.ID)
		if !ok {
			return nil, fmt.Errorf("slots: range %d-%d: %w: %q", r.First, r.Last, kolco.ErrUnknownNode, r.ID)
		}
		if r.First < 0 || r.Last >= count || r.First > r.Last {
			return nil, fmt.Errorf("%w: range %d-%d outside 0-%d", ErrSlotMap, r.First, r.Last, count-1)
		}
		for slot := r.First; slot <= r.Last; slot++ {
			if s.owner[slot] >= 0 {
				return nil, fmt.Errorf("%w: slot %d assigned twice", ErrSlotMap, slot)
			}
			s.owner[slot] = int32(i)
		}
	}
	if set.Len() > 0 {
		if slot := slices.Index(s.owner, -1); slot >= 0 {
			return nil, fmt.Errorf("%w: slot %d not assigned", ErrSlotMap, slot)
		}
	}
	m := newMap(cfg.Hash)
	m.m.Store(s.link())
	return m, nil
}

// Count returns the number of slots.
func (m *Map) Count() int { return len(m.m.Load().owner) }

// Slot returns the slot of key: CRC16(HashTag(key)) mod Count, or with
// [Config.Hash] the hash's instead of CRC16. With the defaults it equals
// [KeySlot].
func (m *Map) Slot(key string) int {
	return int(m.slot(key, m.m.Load().mask))
}

// slot returns the slot of key among mask+1.
func (m *Map) slot(key string, mask uint32) uint32 {
	if m.hash == nil {
		return uint32(CRC16(HashTag(key))) & mask
	}
	return uint32(m.hash(HashTag(key))) & mask
}

// Owner returns the node that owns slot. The error wraps [kolco.ErrNoNodes]
// when the map has no nodes and [ErrSlotMap] when slot is out of range.
func (m *Map) Owner(slot int) (kolco.Node, error) {
	s := m.m.Load()
	if slot < 0 || slot >= len(s.owner) {
		return kolco.Node{}, fmt.Errorf("%w: slot %d outside 0-%d", ErrSlotMap, slot, len(s.owner)-1)
	}
	if len(s.nodes) == 0 {
		return kolco.Node{}, kolco.ErrNoNodes
	}
	return s.nodes[s.owner[slot]], nil
}

// Locate returns the owner of key's slot. The error is [kolco.ErrNoNodes]
// when the map has no nodes.
func (m *Map) Locate(key string) (*kolco.Node, error) {
	if n, _ := m.find(key); n != nil {
		return n, nil
	}
	return nil, kolco.ErrNoNodes
}

// LocateID returns the ID of the node Locate returns. The error is
// kolco.ErrNoNodes when the placement has no nodes.
func (m *Map) LocateID(key string) (string, error) {
	if n, _ := m.find(key); n != nil {
		return n.ID, nil
	}
	return "", kolco.ErrNoNodes
}

// LocateIndex returns the position in Nodes of the node Locate returns.
// The error is kolco.ErrNoNodes, with -1, when the placement has no nodes.
func (m *Map) LocateIndex(key string) (int, error) {
	if _, i := m.find(key); i >= 0 {
		return i, nil
	}
	return -1, kolco.ErrNoNodes
}

// find returns the owner of key in the current state and its index in
// the state's node set, or nil and -1 without nodes.
func (m *Map) find(key string) (*kolco.Node, int) {
	s := m.m.Load()
	if len(s.nodes) == 0 {
		return nil, -1
	}
	i := int(s.owner[m.slot(key, s.mask)])
	return &s.nodes[i], i
}

// LocateN appends up to n distinct owners of key to dst: the owner of key's
// slot, then the owners of the following slots (wrapping around) in order of
// first appearance, then, when n exceeds the number of nodes owning slots,
// the remaining nodes in ID order. The error is [kolco.ErrBadCount] when
// n < 1 and [kolco.ErrNoNodes] when the map has no nodes.
func (m *Map) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	if n < 1 {
		return dst, kolco.ErrBadCount
	}
	s := m.m.Load()
	if len(s.nodes) == 0 {
		return dst, kolco.ErrNoNodes
	}
	n = min(n, len(s.nodes))
	start := len(dst)
	slot := m.slot(key, s.mask)
	for range s.runs + 1 {
		if len(dst)-start == n {
			return dst, nil
		}
		dst = nodeset.AppendNew(dst, start, s.nodes[s.owner[slot]])
		slot = s.next[slot]
	}
	return nodeset.AppendRest(dst, start, n, s.nodes), nil
}

// Nodes returns a copy of the node set, sorted by ID.
func (m *Map) Nodes() []kolco.Node { return m.m.Load().set.Nodes() }

// SlotCounts returns the number of slots each node owns, by node ID.
func (m *Map) SlotCounts() map[string]int {
	s := m.m.Load()
	out := make(map[string]int, len(s.nodes))
	for _, nd := range s.nodes {
		out[nd.ID] = 0
	}
	for _, o := range s.owner {
		if o >= 0 {
			out[s.nodes[o].ID]++
		}
	}
	return out
}

// Ranges returns the slot map as runs of consecutive slots with one owner,
// in slot order, in the shape [FromRanges] accepts. It is empty when the map
// has no nodes.
func (m *Map) Ranges() []Range {
	s := m.m.Load()
	if len(s.nodes) == 0 {
		return nil
	}
	var out []Range
	for slot, o := range s.owner {
		id := s.nodes[o].ID
		if k := len(out) - 1; k >= 0 && out[k].ID == id && out[k].Last == slot-1 {
			out[k].Last = slot
			continue
		}
		out = append(out, Range{First: slot, Last: slot, ID: id})
	}
	return out
}
