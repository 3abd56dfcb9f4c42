package modulo

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
	"github.com/kolco-dev/kolco/keyhash"
)

// MaxSlots is the largest total number of slots (the sum of the rounded
// weights) a placement accepts; it bounds the memory a weight can claim.
const MaxSlots = 1 << 20

// Config holds the settings of a [Table]. The zero value means the
// documented defaults.
type Config struct {
	// Hash hashes keys. Nil means keyhash.XXH3.
	Hash keyhash.Func
}

// Table places a key on slot hash(key) mod S, where the S slots repeat
// each node, in ID order, as many times as its rounded weight. It is safe
// for concurrent use.
type Table struct {
	hash keyhash.Func
	mu   sync.Mutex // serializes writers
	snap atomic.Pointer[snapshot]
}

// snapshot is an immutable state; a change builds a new one.
type snapshot struct {
	set   nodeset.Set
	slots []int32 // node index per slot
}

// New returns a placement over nodes. The error wraps kolco.ErrBadNodeID,
// kolco.ErrDuplicateNode or kolco.ErrBadWeight (also when the rounded
// weights sum to more than [MaxSlots]). An empty set is allowed: lookups
// then fail with kolco.ErrNoNodes until nodes are added.
func New(nodes []kolco.Node, cfg Config) (*Table, error) {
	set, err := nodeset.New(nodes)
	if err != nil {
		return nil, err
	}
	s, err := newSnapshot(set)
	if err != nil {
		return nil, err
	}
	m := &Table{hash: cfg.Hash}
	if m.hash == nil {
		m.hash = keyhash.XXH3
	}
	m.snap.Store(s)
	return m, nil
}

// Repetitions returns how many slots a node of weight w gets: w rounded to
// the nearest integer, at least 1.
func Repetitions(w float64) int {
	return int(max(1, math.Round(min(w, MaxSlots+1))))
}

func newSnapshot(set nodeset.Set) (*snapshot, error) {
	total := 0
	for i := range set.Len() {
		total += Repetitions(set.At(i).EffectiveWeight())
		if total > MaxSlots {
			return nil, fmt.Errorf("%w: weights sum to more than %d slots", kolco.ErrBadWeight, MaxSlots)
		}
	}
	slots := make([]int32, 0, total)
	for i := range set.Len() {
		for range Repetitions(set.At(i).EffectiveWeight()) {
			slots = append(slots, int32(i))
		}
	}
	return &snapshot{set: set, slots: slots}, nil
}

// Locate returns the node owning key. The error is kolco.ErrNoNodes when
// the placement has no nodes.
func (m *Table) Locate(key string) (kolco.Node, error) {
	s := m.snap.Load()
	if len(s.slots) == 0 {
		return kolco.Node{}, kolco.ErrNoNodes
	}
	return s.set.At(int(s.slots[m.hash(key)%uint64(len(s.slots))])), nil
}

// LocateN appends up to n distinct owners of key to dst: the owner, then
// the nodes following it in ID order, wrapping around. The error is
// kolco.ErrBadCount when n < 1 and kolco.ErrNoNodes without nodes.
func (m *Table) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	if n < 1 {
		return dst, fmt.Errorf("%w (got %d)", kolco.ErrBadCount, n)
	}
	s := m.snap.Load()
	if len(s.slots) == 0 {
		return dst, kolco.ErrNoNodes
	}
	first := int(s.slots[m.hash(key)%uint64(len(s.slots))])
	size := s.set.Len()
	for i := range min(n, size) {
		dst = append(dst, s.set.At((first+i)%size))
	}
	return dst, nil
}

// Nodes returns a copy of the node set, sorted by ID.
func (m *Table) Nodes() []kolco.Node { return m.snap.Load().set.Nodes() }

// Add adds nodes. The error wraps kolco.ErrDuplicateNode,
// kolco.ErrBadNodeID or kolco.ErrBadWeight; on error nothing changes.
func (m *Table) Add(nodes ...kolco.Node) error {
	return m.change(func(s nodeset.Set) (nodeset.Set, error) { return s.Add(nodes...) })
}

// Remove removes the nodes with the given IDs. The error wraps
// kolco.ErrUnknownNode; on error nothing changes.
func (m *Table) Remove(ids ...string) error {
	return m.change(func(s nodeset.Set) (nodeset.Set, error) { return s.Remove(ids...) })
}

// Reweight sets the weight of one node. The error wraps
// kolco.ErrUnknownNode or kolco.ErrBadWeight; on error nothing changes.
func (m *Table) Reweight(id string, weight float64) error {
	return m.change(func(s nodeset.Set) (nodeset.Set, error) { return s.Reweight(id, weight) })
}

func (m *Table) change(f func(nodeset.Set) (nodeset.Set, error)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	set, err := f(m.snap.Load().set)
	if err != nil {
		return err
	}
	s, err := newSnapshot(set)
	if err != nil {
		return err
	}
	m.snap.Store(s)
	return nil
}
