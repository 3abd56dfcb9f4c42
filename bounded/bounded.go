package bounded

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/ring"
)

// ErrBadEpsilon is returned for a negative, NaN or infinite
// [Config.Epsilon]. It wraps [kolco.ErrBadConfig].
var ErrBadEpsilon = fmt.Errorf("bounded: epsilon must be a positive finite number (%w)", kolco.ErrBadConfig)

// DefaultEpsilon is the load slack of a [Config] whose Epsilon is zero:
// capacities are 25% above the average load.
const DefaultEpsilon = 0.25

// DefaultVNodes is the number of ring points per unit of weight of a
// [Config] whose VNodes is zero: fewer than a plain ring's
// [ring.DefaultVNodes], because the bounded walk, not the points, evens
// the load out.
const DefaultVNodes = 64

// Config sets up a [Ring]. The zero value means the documented defaults.
type Config struct {
	// Epsilon is the slack ε: a node of weight w may hold at most
	// ceil((1+ε) * load * w / total weight), load being the number of keys
	// being assigned (static mode) or of requests in flight counting the
	// new one (live mode). Zero means [DefaultEpsilon]; a negative, NaN or
	// infinite value is rejected with [ErrBadEpsilon] (ε = 0 cannot be
	// asked for: it would leave no room and the walk could visit every
	// node). The paper's trade-off: smaller ε balances tighter but moves
	// more keys on a change, about 1/ε² more.
	Epsilon float64
	// VNodes is the number of ring points per unit of weight, as in
	// [ring.Config]: a node of weight w has max(1, round(w*VNodes)) points.
	// Zero means [DefaultVNodes]; a negative value is rejected with
	// kolco.ErrBadConfig. More points spread a full node's overflow over
	// more successors.
	VNodes int
	// Hash hashes keys and point labels "ID#i", as in [ring.Config]. Nil
	// means [keyhash.XXH3].
	Hash keyhash.Func
}

func (c Config) withDefaults() (Config, error) {
	if c.Epsilon == 0 {
		c.Epsilon = DefaultEpsilon
	}
	if !(c.Epsilon > 0) || math.IsInf(c.Epsilon, 0) {
		return c, fmt.Errorf("%w (got %v)", ErrBadEpsilon, c.Epsilon)
	}
	if c.VNodes == 0 {
		c.VNodes = DefaultVNodes
	}
	return c, nil
}

// Ring is a consistent hash ring with bounded loads: a [ring.Ring] plus a
// load counter per node. It implements [kolco.Placement] and
// [kolco.Mutable]; [Ring.Assign] places a key set statically and
// [Ring.Acquire] places live requests. Lookups take no lock and do not
// allocate; changes are serialized and published atomically.
type Ring struct {
	eps   float64
	ring  *ring.Ring // the placement; changed only under cur's writer lock
	cur   nodeset.Cell[state]
	total atomic.Int64 // requests in flight, over every node ever present
}

// state pairs one immutable snapshot of the ring with a load counter per
// node, in the snapshot's node order. The counters are shared between
// states: a node keeps its counter while present.
type state struct {
	snap      *ring.Snapshot
	load      []*atomic.Int64
	weightSum float64
}

var (
	_ kolco.Placement    = (*Ring)(nil)
	_ kolco.Mutable      = (*Ring)(nil)
	_ kolco.IDLocator    = (*Ring)(nil)
	_ kolco.IndexLocator = (*Ring)(nil)
)

// New returns a ring of nodes. The result does not depend on the order of
// nodes. The error wraps [ErrBadEpsilon], [kolco.ErrBadConfig] (also for a
// weight that would give a node more points than a ring holds),
// [kolco.ErrDuplicateNode], [kolco.ErrBadNodeID] or [kolco.ErrBadWeight].
func New(nodes []kolco.Node, cfg Config) (*Ring, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	rg, err := ring.New(nodes, ring.Config{VNodes: cfg.VNodes, Hash: cfg.Hash})
	if err != nil {
		return nil, fmt.Errorf("bounded: %w", err)
	}
	r := &Ring{eps: cfg.Epsilon, ring: rg}
	r.cur.Store(nextState(&state{snap: &ring.Snapshot{}}, rg.Snapshot()))
	return r, nil
}

// nextState returns the state for snap, reusing the load counters of old's
// nodes that stay.
func nextState(old *state, snap *ring.Snapshot) *state {
	s := &state{snap: snap, load: make([]*atomic.Int64, snap.Len())}
	j := 0
	for i := range s.load {
		nd := snap.Node(i)
		s.weightSum += nd.EffectiveWeight()
		// Both snapshots list nodes in ID order: one merge finds the
		// counters to keep.
		for j < old.snap.Len() && old.snap.Node(j).ID < nd.ID {
			j++
		}
		if j < old.snap.Len() && old.snap.Node(j).ID == nd.ID {
			s.load[i] = old.load[j]
		} else {
			s.load[i] = new(atomic.Int64)
		}
	}
	return s
}

// update applies a change to the ring and publishes its snapshot with the
// load counters; on error nothing changes.
func (r *Ring) update(change func(*ring.Ring) error) error {
	return r.cur.Update(func(old *state) (*state, error) {
		if err := change(r.ring); err != nil {
			return nil, fmt.Errorf("bounded: %w", err)
		}
		return nextState(old, r.ring.Snapshot()), nil
	})
}

// Epsilon returns the configured slack ε.
func (r *Ring) Epsilon() float64 { return r.eps }

// Config returns the configuration of the underlying ring, defaults filled
// in.
func (r *Ring) Config() ring.Config { return r.ring.Config() }

// Nodes returns a copy of the node set, sorted by ID.
func (r *Ring) Nodes() []kolco.Node { return r.ring.Nodes() }

// Apply makes the change c, all of it or, on error, none. Requests in
// flight on removed nodes stay counted until released. The error wraps
// [kolco.ErrUnknownNode], [kolco.ErrDuplicateNode], [kolco.ErrBadNodeID],
// [kolco.ErrBadWeight] or [kolco.ErrBadConfig] (too many points).
func (r *Ring) Apply(c kolco.Change) error {
	return r.update(func(rg *ring.Ring) error { return rg.Apply(c) })
}

// Add adds nodes. The error is that of [Ring.Apply].
func (r *Ring) Add(nodes ...kolco.Node) error { return r.Apply(kolco.Change{Add: nodes}) }

// Remove removes the nodes with the given IDs. Requests in flight on them
// stay counted until released. The error wraps [kolco.ErrUnknownNode].
func (r *Ring) Remove(ids ...string) error { return r.Apply(kolco.Change{Remove: ids}) }

// Reweight sets the weight of node id, which changes its points and its
// capacity. The error wraps [kolco.ErrUnknownNode], [kolco.ErrBadWeight] or
// [kolco.ErrBadConfig] (too many points).
func (r *Ring) Reweight(id string, weight float64) error {
	return r.update(func(rg *ring.Ring) error { return rg.Reweight(id, weight) })
}

// capacity returns ceil((1+ε) * load * w / W) for node i, saturating at
// the largest int64 for a huge ε.
func (s *state) capacity(eps float64, i int, load int64) int64 {
	c := math.Ceil((1 + eps) * float64(load) * s.snap.Node(i).EffectiveWeight() / s.weightSum)
	if c >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(c)
}

// AppendIdentity appends the identity of the ring and its load bounds for
// kolco.Fingerprint: the ring's identity (see ring.Snapshot.AppendIdentity),
// ε and the weights, which decide the capacities of Assign and Acquire.
// The error wraps kolco.ErrBadConfig for a hash that keyhash does not name.
func (r *Ring) AppendIdentity(dst []byte) ([]byte, error) {
	s := r.cur.Load()
	nodes := s.snap.Nodes()
	return nodeset.Identity(dst, "bounded", nodes, func(w *nodeset.Writer) error {
		ring, err := s.snap.AppendIdentity(nil)
		if err != nil {
			return fmt.Errorf("bounded: %w", err)
		}
		w.String(string(ring))
		w.Float(r.eps)
		w.Weights(nodes)
		return nil
	})
}
