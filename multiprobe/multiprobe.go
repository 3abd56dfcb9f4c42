package multiprobe

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/mix"
	"github.com/kolco-dev/kolco/internal/nodeset"
	"github.com/kolco-dev/kolco/keyhash"
)

// DefaultProbes is the probe count of the zero [Config]: the paper's choice,
// which brings the peak-to-mean load ratio to about 1.05.
const DefaultProbes = 21

// MaxProbes bounds Config.Probes; lookups cost O(Probes * log points).
const MaxProbes = 1024

// MaxPoints bounds the total number of points (the sum of rounded weights).
const MaxPoints = 1 << 22

// Config holds the settings of a [Ring]. The zero value means the
// documented defaults.
type Config struct {
	// Hash hashes keys and node IDs. Nil means keyhash.XXH3.
	Hash keyhash.Func
	// Probes is the number of probes per lookup, k in the paper. Zero
	// means [DefaultProbes]; it must not be negative or above [MaxProbes].
	Probes int
}

// Ring is a multi-probe consistent hash ring. It is safe for
// concurrent use.
type Ring struct {
	hash   keyhash.Func
	probes int
	m      nodeset.Engine[snapshot]
}

// snapshot is an immutable state; a change builds a new one.
type snapshot struct {
	set    nodeset.Set
	points []uint64 // sorted ring positions
	owner  []int32  // node index (in set) of each point
	// index[t] is the first point at or after position t<<shift: a probe
	// starts its search there instead of binary searching the whole ring,
	// which replaces ~log2(N) unpredictable branches by about one step.
	index []int32
	shift uint
}

var (
	_ kolco.Placement    = (*Ring)(nil)
	_ kolco.Mutable      = (*Ring)(nil)
	_ kolco.IDLocator    = (*Ring)(nil)
	_ kolco.IndexLocator = (*Ring)(nil)
)

// New returns a placement over nodes. The error wraps kolco.ErrBadConfig
// for a probe count out of range, and kolco.ErrBadNodeID,
// kolco.ErrDuplicateNode or kolco.ErrBadWeight (also when the rounded
// weights sum to more than [MaxPoints]). An empty set is allowed: lookups
// then fail with kolco.ErrNoNodes until nodes are added.
func New(nodes []kolco.Node, cfg Config) (*Ring, error) {
	if cfg.Probes < 0 || cfg.Probes > MaxProbes {
		return nil, fmt.Errorf("%w: multiprobe: Probes %d not in 0..%d", kolco.ErrBadConfig, cfg.Probes, MaxProbes)
	}
	m := &Ring{hash: cfg.Hash, probes: cfg.Probes}
	if m.hash == nil {
		m.hash = keyhash.XXH3
	}
	if m.probes == 0 {
		m.probes = DefaultProbes
	}
	m.m = nodeset.Engine[snapshot]{
		Name: "multiprobe",
		Set:  func(s *snapshot) nodeset.Set { return s.set },
		Next: func(_ *snapshot, d nodeset.Delta) (*snapshot, error) { return m.newSnapshot(d.New) },
	}
	if err := m.m.Init(&snapshot{}, nodes); err != nil {
		return nil, err
	}
	return m, nil
}

// Points returns how many points a node of weight w gets: w rounded to the
// nearest integer, at least 1.
func Points(w float64) int {
	return int(max(1, math.Round(min(w, MaxPoints+1))))
}

// spread derives the i-th of a family of hashes from h: point i of a node,
// probe i of a key.
func spread(h uint64, i int) uint64 { return mix.Fmix64(h + uint64(i)*0x9e3779b97f4a7c15) }

func (m *Ring) newSnapshot(set nodeset.Set) (*snapshot, error) {
	total := 0
	for i := range set.Len() {
		if total += Points(set.At(i).EffectiveWeight()); total > MaxPoints {
			return nil, fmt.Errorf("%w: weights sum to more than %d points", kolco.ErrBadWeight, MaxPoints)
		}
	}
	type pt struct {
		pos   uint64
		owner int32
	}
	pts := make([]pt, 0, total)
	for i := range set.Len() {
		h := m.hash(set.At(i).ID)
		for j := range Points(set.At(i).EffectiveWeight()) {
			pts = append(pts, pt{spread(h, j), int32(i)})
		}
	}
	// Equal positions are ordered by owner, that is by node ID, so that
	// the ring does not depend on the order of the nodes.
	slices.SortFunc(pts, func(a, b pt) int {
		return cmp.Or(cmp.Compare(a.pos, b.pos), cmp.Compare(a.owner, b.owner))
	})
	s := &snapshot{set: set, points: make([]uint64, total), owner: make([]int32, total)}
	for i, p := range pts {
		s.points[i], s.owner[i] = p.pos, p.owner
	}
	s.buildIndex()
	return s, nil
}

// buildIndex fills the index with about two entries per point (at most
// 2^20), so that a probe walks one point on average.
func (s *snapshot) buildIndex() {
	if len(s.points) == 0 {
		return
	}
	bits := min(20, 1+bitsFor(len(s.points)))
	s.shift = 64 - uint(bits)
	s.index = make([]int32, 1<<bits)
	j := 0
	for t := range s.index {
		for j < len(s.points) && s.points[j]>>s.shift < uint64(t) {
			j++
		}
		s.index[t] = int32(j)
	}
}

// bitsFor returns the number of bits needed to count to n.
func bitsFor(n int) int {
	b := 0
	for ; n > 0; n >>= 1 {
		b++
	}
	return b
}

// Nodes returns a copy of the node set, sorted by ID.
func (m *Ring) Nodes() []kolco.Node { return m.m.Load().set.Nodes() }

// Apply makes the change c as a whole: all of it or, on error, none. The
// error wraps kolco.ErrUnknownNode, kolco.ErrDuplicateNode,
// kolco.ErrBadNodeID or kolco.ErrBadWeight (also when the rounded weights
// would sum to more than [MaxPoints]).
func (m *Ring) Apply(c kolco.Change) error { return m.m.Apply(c) }

// Add adds nodes. The error is that of [Ring.Apply].
func (m *Ring) Add(nodes ...kolco.Node) error { return m.m.Add(nodes...) }

// Remove removes the nodes with the given IDs. The error wraps
// kolco.ErrUnknownNode; on error nothing changes.
func (m *Ring) Remove(ids ...string) error { return m.m.Remove(ids...) }

// Reweight sets the weight of one node. The error wraps
// kolco.ErrUnknownNode or kolco.ErrBadWeight; on error nothing changes.
func (m *Ring) Reweight(id string, weight float64) error { return m.m.Reweight(id, weight) }

// AppendIdentity appends the placement's identity for kolco.Fingerprint:
// the hash by name, the probe count and each node's ID and number of
// points. The error wraps kolco.ErrBadConfig for a hash that keyhash does
// not name.
func (m *Ring) AppendIdentity(dst []byte) ([]byte, error) {
	nodes := m.m.Load().set.View()
	return nodeset.Identity(dst, "multiprobe", nodes, func(w *nodeset.Writer) error {
		if err := w.HashName("multiprobe", m.hash); err != nil {
			return err
		}
		w.Uint(uint64(m.probes))
		for _, n := range nodes {
			w.String(n.ID)
			w.Uint(uint64(Points(n.EffectiveWeight())))
		}
		return nil
	})
}
