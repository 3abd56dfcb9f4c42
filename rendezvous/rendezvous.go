package rendezvous

import (
	"math"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/mix"
	"github.com/kolco-dev/kolco/internal/nodeset"
	"github.com/kolco-dev/kolco/keyhash"
)

// Config holds the settings of a [Placement]. The zero value means the
// documented defaults.
type Config struct {
	// Hash hashes keys and node IDs. Nil means keyhash.XXH3.
	Hash keyhash.Func

	// Separator selects how a node's score is computed. Empty (the
	// default) hashes the key once and mixes that hash with a hash of each
	// node ID, which is fast. Non-empty hashes the string
	// ID + Separator + key for every node, as the article's Python
	// one-liner does with Hash = keyhash.MD5 and Separator = ":"; a weak
	// hash (keyhash.FNV1a, keyhash.CRC32) is then finalized with
	// keyhash.Finalized, since the highest of its raw values favours some
	// IDs (crc32 gave the largest of 11 nodes twice the mean share).
	Separator string
}

// Placement places keys by highest random weight. It is safe for
// concurrent use: lookups read an immutable snapshot, changes publish a new
// one.
type Placement struct {
	hash    keyhash.Func
	sepHash keyhash.Func // hash, finalized: the hash of separator mode
	sep     string
	m       nodeset.Engine[snapshot]
}

// snapshot is an immutable state; a change builds a new one.
type snapshot struct {
	set      nodeset.Set
	seeds    []uint64  // mixed hash of each node ID (Separator == "")
	prefixes []string  // ID + Separator of each node (Separator != "")
	weights  []float64 // effective weights; nil when all are equal
}

var (
	_ kolco.Placement    = (*Placement)(nil)
	_ kolco.Mutable      = (*Placement)(nil)
	_ kolco.IDLocator    = (*Placement)(nil)
	_ kolco.IndexLocator = (*Placement)(nil)
)

// New returns a placement over nodes. The error wraps kolco.ErrBadNodeID,
// kolco.ErrDuplicateNode or kolco.ErrBadWeight. An empty set is allowed:
// lookups then fail with kolco.ErrNoNodes until nodes are added.
func New(nodes []kolco.Node, cfg Config) (*Placement, error) {
	r := &Placement{hash: cfg.Hash, sep: cfg.Separator}
	if r.hash == nil {
		r.hash = keyhash.XXH3
	}
	r.sepHash = keyhash.Finalized(r.hash)
	r.m = nodeset.Engine[snapshot]{
		Name: "rendezvous",
		Set:  func(s *snapshot) nodeset.Set { return s.set },
		Next: func(_ *snapshot, d nodeset.Delta) (*snapshot, error) { return r.newSnapshot(d.New), nil },
	}
	if err := r.m.Init(&snapshot{}, nodes); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Placement) newSnapshot(set nodeset.Set) *snapshot {
	s := &snapshot{set: set}
	n := set.Len()
	if r.sep == "" {
		s.seeds = make([]uint64, n)
		for i := range n {
			s.seeds[i] = mix.Fmix64(r.hash(set.At(i).ID))
		}
	} else {
		s.prefixes = make([]string, n)
		for i := range n {
			s.prefixes[i] = set.At(i).ID + r.sep
		}
	}
	for i := 1; i < n; i++ {
		if set.At(i).EffectiveWeight() != set.At(0).EffectiveWeight() {
			s.weights = make([]float64, n)
			for j := range n {
				s.weights[j] = set.At(j).EffectiveWeight()
			}
			break
		}
	}
	return s
}

// weighted turns a raw 64-bit score into the logarithmic method's
// w / -ln(u), u uniform in (0, 1), returned as the bits of that positive
// float64 so that it compares as an integer.
func weighted(raw uint64, w float64) uint64 {
	u := (float64(raw>>11) + 0.5) / (1 << 53)
	return math.Float64bits(w / -math.Log(u))
}

// Nodes returns a copy of the node set, sorted by ID.
func (r *Placement) Nodes() []kolco.Node { return r.m.Load().set.Nodes() }

// Apply makes the change c as a whole: all of it or, on error, none. The
// error wraps kolco.ErrUnknownNode, kolco.ErrDuplicateNode,
// kolco.ErrBadNodeID or kolco.ErrBadWeight.
func (r *Placement) Apply(c kolco.Change) error { return r.m.Apply(c) }

// Add adds nodes. The error is that of [Placement.Apply].
func (r *Placement) Add(nodes ...kolco.Node) error { return r.m.Add(nodes...) }

// Remove removes the nodes with the given IDs. The error wraps
// kolco.ErrUnknownNode; on error nothing changes.
func (r *Placement) Remove(ids ...string) error { return r.m.Remove(ids...) }

// Reweight sets the weight of one node. The error wraps
// kolco.ErrUnknownNode or kolco.ErrBadWeight; on error nothing changes.
func (r *Placement) Reweight(id string, weight float64) error { return r.m.Reweight(id, weight) }

// AppendIdentity appends the placement's identity for kolco.Fingerprint:
// the hash by name, the separator, the node IDs and their weights (all
// equal weights written alike, and weights scaled by a power of two too).
// The error wraps kolco.ErrBadConfig for a hash that keyhash does not name.
func (r *Placement) AppendIdentity(dst []byte) ([]byte, error) {
	nodes := r.m.Load().set.View()
	return nodeset.Identity(dst, "rendezvous", nodes, func(w *nodeset.Writer) error {
		if err := w.HashName("rendezvous", r.hash); err != nil {
			return err
		}
		w.String(r.sep)
		w.IDs(nodes)
		w.Weights(nodes)
		return nil
	})
}
