package modulo

import (
	"fmt"
	"math"

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
	m    nodeset.Engine[snapshot]
}

// snapshot is an immutable state; a change builds a new one.
type snapshot struct {
	set   nodeset.Set
	slots []int32 // node index per slot
}

var (
	_ kolco.Placement    = (*Table)(nil)
	_ kolco.Mutable      = (*Table)(nil)
	_ kolco.IDLocator    = (*Table)(nil)
	_ kolco.IndexLocator = (*Table)(nil)
)

// New returns a placement over nodes. The error wraps kolco.ErrBadNodeID,
// kolco.ErrDuplicateNode or kolco.ErrBadWeight (also when the rounded
// weights sum to more than [MaxSlots]). An empty set is allowed: lookups
// then fail with kolco.ErrNoNodes until nodes are added.
func New(nodes []kolco.Node, cfg Config) (*Table, error) {
	m := &Table{hash: cfg.Hash}
	if m.hash == nil {
		m.hash = keyhash.XXH3
	}
	m.m = nodeset.Engine[snapshot]{
		Name: "modulo",
		Set:  func(s *snapshot) nodeset.Set { return s.set },
		Next: func(_ *snapshot, d nodeset.Delta) (*snapshot, error) { return newSnapshot(d.New) },
	}
	if err := m.m.Init(&snapshot{}, nodes); err != nil {
		return nil, err
	}
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

// Locate returns the node that owns key. The error is kolco.ErrNoNodes
// when the placement has no nodes.
func (m *Table) Locate(key string) (*kolco.Node, error) {
	if n, _ := m.find(key); n != nil {
		return n, nil
	}
	return nil, kolco.ErrNoNodes
}

// LocateID returns the ID of the node Locate returns. The error is
// kolco.ErrNoNodes when the placement has no nodes.
func (m *Table) LocateID(key string) (string, error) {
	if n, _ := m.find(key); n != nil {
		return n.ID, nil
	}
	return "", kolco.ErrNoNodes
}

// LocateIndex returns the position in Nodes of the node Locate returns.
// The error is kolco.ErrNoNodes, with -1, when the placement has no nodes.
func (m *Table) LocateIndex(key string) (int, error) {
	if _, i := m.find(key); i >= 0 {
		return i, nil
	}
	return -1, kolco.ErrNoNodes
}

// find returns the owner of key in the current state and its index in
// the state's node set, or nil and -1 without nodes.
func (m *Table) find(key string) (*kolco.Node, int) {
	s := m.m.Load()
	if len(s.slots) == 0 {
		return nil, -1
	}
	i := int(s.slots[m.hash(key)%uint64(len(s.slots))])
	return &s.set.View()[i], i
}

// LocateN appends up to n distinct owners of key to dst: the owner, then
// the nodes following it in ID order, wrapping around. The error is
// kolco.ErrBadCount when n < 1 and kolco.ErrNoNodes without nodes.
func (m *Table) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	if n < 1 {
		return dst, fmt.Errorf("%w (got %d)", kolco.ErrBadCount, n)
	}
	s := m.m.Load()
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
func (m *Table) Nodes() []kolco.Node { return m.m.Load().set.Nodes() }

// Apply makes the change c as a whole: all of it or, on error, none. The
// error wraps kolco.ErrUnknownNode, kolco.ErrDuplicateNode,
// kolco.ErrBadNodeID or kolco.ErrBadWeight (also when the rounded weights
// would sum to more than [MaxSlots]).
func (m *Table) Apply(c kolco.Change) error { return m.m.Apply(c) }

// Add adds nodes. The error is that of [Table.Apply].
func (m *Table) Add(nodes ...kolco.Node) error { return m.m.Add(nodes...) }

// Remove removes the nodes with the given IDs. The error wraps
// kolco.ErrUnknownNode; on error nothing changes.
func (m *Table) Remove(ids ...string) error { return m.m.Remove(ids...) }

// Reweight sets the weight of one node. The error wraps
// kolco.ErrUnknownNode or kolco.ErrBadWeight; on error nothing changes.
func (m *Table) Reweight(id string, weight float64) error { return m.m.Reweight(id, weight) }

// AppendIdentity appends the placement's identity for kolco.Fingerprint:
// the hash by name and each node's ID and number of slots. The error wraps
// kolco.ErrBadConfig for a hash that keyhash does not name.
func (m *Table) AppendIdentity(dst []byte) ([]byte, error) {
	s := m.m.Load()
	nodes := s.set.View()
	return nodeset.Identity(dst, "modulo", nodes, func(w *nodeset.Writer) error {
		if err := w.HashName("modulo", m.hash); err != nil {
			return err
		}
		for _, n := range nodes {
			w.String(n.ID)
			w.Uint(uint64(Repetitions(n.EffectiveWeight())))
		}
		return nil
	})
}
