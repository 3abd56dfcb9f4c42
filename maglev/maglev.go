package maglev

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
	"github.com/kolco-dev/kolco/keyhash"
)

// DefaultTableSize is the lookup table size of a [Table] whose
// [Config.TableSize] is zero: the prime the paper uses in its evaluation.
const DefaultTableSize = 65537

// MaxTableSize bounds [Config.TableSize] so that a table stays below 64 MiB.
const MaxTableSize = 1 << 24

// Config sets up a [Table]. The zero value means the documented defaults.
type Config struct {
	// TableSize is the number of lookup table entries, a prime no larger
	// than [MaxTableSize]. Zero means [DefaultTableSize]. The paper advises
	// a size over 100 times the number of nodes: each node's share is a
	// whole number of entries, and more entries also mean less disruption.
	TableSize int
	// Hash hashes keys. Nil means [keyhash.XXH3]. Node IDs are always hashed
	// with keyhash.XXH3 (offset) and keyhash.XXH64 (skip), two independent
	// functions, so that the table does not depend on this choice.
	Hash keyhash.Func
}

func (c Config) withDefaults() (Config, error) {
	if c.TableSize == 0 {
		c.TableSize = DefaultTableSize
	}
	if c.TableSize < 2 || c.TableSize > MaxTableSize || !isPrime(c.TableSize) {
		return c, fmt.Errorf("%w: table size %d is not a prime in [2, %d]", kolco.ErrBadConfig, c.TableSize, MaxTableSize)
	}
	if c.Hash == nil {
		c.Hash = keyhash.XXH3
	}
	return c, nil
}

// isPrime reports whether n is prime, by trial division (n <= 2^24, so at
// most 4096 divisions, done once per configuration).
func isPrime(n int) bool {
	if n < 2 {
		return false
	}
	for d := 2; d*d <= n; d++ {
		if n%d == 0 {
			return false
		}
	}
	return true
}

// Table is a Maglev lookup table. It implements [kolco.Placement] and
// [kolco.Mutable]. Lookups take no lock and do not allocate; each change
// rebuilds the table beside the current one and publishes it atomically.
type Table struct {
	cfg Config
	// xxh3 reports that cfg.Hash is keyhash.XXH3, the default, which the
	// lookups then call directly rather than through the function value.
	xxh3 bool
	m    nodeset.Engine[state]
}

// state is one immutable version of the table.
type state struct {
	set   nodeset.Set
	nodes []kolco.Node // set.View(), sorted by ID
	entry []int32      // table entry -> index in nodes; empty without nodes
}

// New returns a Maglev table of nodes. The result does not depend on the
// order of nodes. The error wraps [kolco.ErrBadConfig],
// [kolco.ErrDuplicateNode], [kolco.ErrBadNodeID] or [kolco.ErrBadWeight].
func New(nodes []kolco.Node, cfg Config) (*Table, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	name, _ := keyhash.Name(cfg.Hash)
	t := &Table{cfg: cfg, xxh3: name == "xxh3"}
	t.m = nodeset.Engine[state]{
		Name: "maglev",
		Set:  func(s *state) nodeset.Set { return s.set },
		// Every change rebuilds the table: Maglev's population is a
		// function of the node set alone.
		Next: func(_ *state, d nodeset.Delta) (*state, error) {
			return &state{set: d.New, nodes: d.New.View(), entry: populate(d.New.View(), cfg.TableSize)}, nil
		},
	}
	if err := t.m.Init(&state{}, nodes); err != nil {
		return nil, err
	}
	return t, nil
}

// TableSize returns the number of table entries.
func (t *Table) TableSize() int { return t.cfg.TableSize }

// Locate returns the node of key's table entry: the table's own, shared
// by every lookup and never changed, which the caller must not modify. The
// error is [kolco.ErrNoNodes] when the table has no nodes.
func (t *Table) Locate(key string) (*kolco.Node, error) {
	if n, _ := t.find(key); n != nil {
		return n, nil
	}
	return nil, kolco.ErrNoNodes
}

var (
	_ kolco.IDLocator    = (*Table)(nil)
	_ kolco.IndexLocator = (*Table)(nil)
)

// LocateID returns the ID of the node Locate returns. The error is
// [kolco.ErrNoNodes] when the table has no nodes.
func (t *Table) LocateID(key string) (string, error) {
	if n, _ := t.find(key); n != nil {
		return n.ID, nil
	}
	return "", kolco.ErrNoNodes
}

// LocateIndex returns the position in [Table.Nodes] of the node Locate
// returns. The error is [kolco.ErrNoNodes], with -1, when the table has no
// nodes.
func (t *Table) LocateIndex(key string) (int, error) {
	if _, i := t.find(key); i >= 0 {
		return i, nil
	}
	return -1, kolco.ErrNoNodes
}

// find returns the owner of key in the current state and its index in
// the state's node set, or nil and -1 without nodes.
func (t *Table) find(key string) (*kolco.Node, int) {
	// t.hash written out: a function of two calls is not inlined, and
	// the extra call cost about a nanosecond.
	var h uint64
	if t.xxh3 {
		h = keyhash.XXH3(key)
	} else {
		h = t.cfg.Hash(key)
	}
	s := t.m.Load()
	if len(s.nodes) == 0 {
		return nil, -1
	}
	i := int(s.entry[h%uint64(len(s.entry))])
	return &s.nodes[i], i
}

// hash returns the key hash, calling the default directly.
func (t *Table) hash(key string) uint64 {
	if t.xxh3 {
		return keyhash.XXH3(key)
	}
	return t.cfg.Hash(key)
}

// LocateN appends up to n distinct owners of key to dst: the node of key's
// entry, then the nodes of the following entries (wrapping around) in order
// of first appearance, then any node owning no entry, in ID order. The
// error is [kolco.ErrBadCount] when n < 1 and [kolco.ErrNoNodes] when the
// table has no nodes.
func (t *Table) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	if n < 1 {
		return dst, kolco.ErrBadCount
	}
	s := t.m.Load()
	if len(s.nodes) == 0 {
		return dst, kolco.ErrNoNodes
	}
	n = min(n, len(s.nodes))
	start := len(dst)
	size := uint64(len(s.entry))
	e := t.hash(key) % size
	for range size {
		if len(dst)-start == n {
			return dst, nil
		}
		dst = nodeset.AppendNew(dst, start, s.nodes[s.entry[e]])
		if e++; e == size {
			e = 0
		}
	}
	return nodeset.AppendRest(dst, start, n, s.nodes), nil
}

// Nodes returns a copy of the node set, sorted by ID.
func (t *Table) Nodes() []kolco.Node { return t.m.Load().set.Nodes() }

// Entries returns the number of table entries each node owns, by node ID.
func (t *Table) Entries() map[string]int {
	s := t.m.Load()
	out := make(map[string]int, len(s.nodes))
	for _, nd := range s.nodes {
		out[nd.ID] = 0
	}
	for _, e := range s.entry {
		out[s.nodes[e].ID]++
	}
	return out
}

// Apply makes the change c as a whole, all of it or, on error, none, and
// rebuilds the table. The error wraps [kolco.ErrUnknownNode],
// [kolco.ErrDuplicateNode], [kolco.ErrBadNodeID] or [kolco.ErrBadWeight].
func (t *Table) Apply(c kolco.Change) error { return t.m.Apply(c) }

// Add adds nodes and rebuilds the table. The error wraps
// [kolco.ErrDuplicateNode], [kolco.ErrBadNodeID] or [kolco.ErrBadWeight].
func (t *Table) Add(nodes ...kolco.Node) error { return t.m.Add(nodes...) }

// Remove removes the nodes with the given IDs and rebuilds the table. The
// error wraps [kolco.ErrUnknownNode].
func (t *Table) Remove(ids ...string) error { return t.m.Remove(ids...) }

// Reweight sets the weight of node id and rebuilds the table. The error
// wraps [kolco.ErrUnknownNode] or [kolco.ErrBadWeight].
func (t *Table) Reweight(id string, weight float64) error { return t.m.Reweight(id, weight) }

// AppendIdentity appends the table's identity for kolco.Fingerprint: the
// key hash by name, the node IDs and the table itself, so that weights that
// fill the table alike give the same identity. The error wraps
// [kolco.ErrBadConfig] for a hash that keyhash does not name.
func (t *Table) AppendIdentity(dst []byte) ([]byte, error) {
	s := t.m.Load()
	return nodeset.Identity(dst, "maglev", s.nodes, func(w *nodeset.Writer) error {
		if err := w.HashName("maglev", t.cfg.Hash); err != nil {
			return err
		}
		w.IDs(s.nodes)
		w.Uint(uint64(len(s.entry)))
		for _, e := range s.entry {
			w.Uint(uint64(e))
		}
		return nil
	})
}
