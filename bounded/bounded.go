package bounded

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
)

// ErrBadEpsilon is returned for a negative, NaN or infinite
// [Config.Epsilon]. It wraps [kolco.ErrBadConfig].
var ErrBadEpsilon = fmt.Errorf("bounded: epsilon must be a positive finite number (%w)", kolco.ErrBadConfig)

// DefaultEpsilon is the load slack of a [Config] whose Epsilon is zero:
// capacities are 25% above the average load.
const DefaultEpsilon = 0.25

// DefaultPoints is the number of ring points per unit of weight of a
// [Config] whose Points is zero.
const DefaultPoints = 64

// maxPoints bounds the points of one ring, so that a huge weight fails
// with an error instead of exhausting memory.
const maxPoints = 1 << 24

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
	// Points is the number of ring points per unit of weight (a node of
	// weight w has max(1, round(w*Points)) points); zero means
	// [DefaultPoints]. More points spread a full node's overflow over more
	// successors.
	Points int
	// Hash hashes keys and point labels "ID#i". Nil means [keyhash.XXH3].
	Hash keyhash.Func
}

func (c Config) withDefaults() (Config, error) {
	if c.Epsilon == 0 {
		c.Epsilon = DefaultEpsilon
	}
	if !(c.Epsilon > 0) || math.IsInf(c.Epsilon, 0) {
		return c, fmt.Errorf("%w (got %v)", ErrBadEpsilon, c.Epsilon)
	}
	if c.Points == 0 {
		c.Points = DefaultPoints
	}
	if c.Points < 1 || c.Points > maxPoints {
		return c, fmt.Errorf("%w: points per weight %d outside [1, %d]", kolco.ErrBadConfig, c.Points, maxPoints)
	}
	if c.Hash == nil {
		c.Hash = keyhash.XXH3
	}
	return c, nil
}

// Ring is a consistent hash ring with bounded loads. It implements
// [kolco.Placement] and [kolco.Membership]; [Ring.Assign] places a key set
// statically and [Ring.Acquire] places live requests. Lookups take no lock
// and do not allocate; changes are serialized and published atomically.
type Ring struct {
	cfg   Config
	mu    sync.Mutex // serializes writers; readers only load cur
	cur   atomic.Pointer[state]
	total atomic.Int64 // requests in flight, over every node ever present
}

// state is one immutable version of the ring. The load counters it points
// to are shared between versions: a node keeps its counter while present.
type state struct {
	nodes     []kolco.Node    // sorted by ID
	load      []*atomic.Int64 // live load per node
	weightSum float64
	points    []uint64 // sorted
	owner     []int32  // owner[i] indexes nodes for points[i]
	start     []uint32 // see buildIndex
	shift     uint
}

// New returns a ring of nodes. The result does not depend on the order of
// nodes. The error wraps [ErrBadEpsilon], [kolco.ErrBadConfig],
// [kolco.ErrDuplicateNode], [kolco.ErrBadNodeID] or [kolco.ErrBadWeight].
func New(nodes []kolco.Node, cfg Config) (*Ring, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := kolco.CheckNew(func(string) bool { return false }, nodes); err != nil {
		return nil, err
	}
	r := &Ring{cfg: cfg}
	s, err := r.build(slices.Clone(nodes), nil)
	if err != nil {
		return nil, err
	}
	r.cur.Store(s)
	return r, nil
}

// Epsilon returns the configured slack ε.
func (r *Ring) Epsilon() float64 { return r.cfg.Epsilon }

// Nodes returns a copy of the node set, sorted by ID.
func (r *Ring) Nodes() []kolco.Node { return slices.Clone(r.cur.Load().nodes) }

// Add adds nodes. The error wraps [kolco.ErrDuplicateNode],
// [kolco.ErrBadNodeID], [kolco.ErrBadWeight] or [kolco.ErrBadConfig] (too
// many points).
func (r *Ring) Add(nodes ...kolco.Node) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.cur.Load()
	if err := kolco.CheckNew(func(id string) bool { _, ok := old.index(id); return ok }, nodes); err != nil {
		return fmt.Errorf("bounded: add: %w", err)
	}
	return r.publish(append(slices.Clone(old.nodes), nodes...), old)
}

// Remove removes the nodes with the given IDs. Requests in flight on them
// stay counted until released. The error wraps [kolco.ErrUnknownNode].
func (r *Ring) Remove(ids ...string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.cur.Load()
	nodes := slices.Clone(old.nodes)
	for _, id := range ids {
		i, ok := (&state{nodes: nodes}).index(id)
		if !ok {
			return fmt.Errorf("bounded: remove: %w: %q", kolco.ErrUnknownNode, id)
		}
		nodes = slices.Delete(nodes, i, i+1)
	}
	return r.publish(nodes, old)
}

// Reweight sets the weight of node id, which changes its points and its
// capacity. The error wraps [kolco.ErrUnknownNode] or [kolco.ErrBadWeight].
func (r *Ring) Reweight(id string, weight float64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.cur.Load()
	i, ok := old.index(id)
	if !ok {
		return fmt.Errorf("bounded: reweight: %w: %q", kolco.ErrUnknownNode, id)
	}
	if err := kolco.CheckWeight(weight); err != nil {
		return fmt.Errorf("bounded: reweight %q: %w", id, err)
	}
	nodes := slices.Clone(old.nodes)
	nodes[i].Weight = weight
	return r.publish(nodes, old)
}

func (r *Ring) publish(nodes []kolco.Node, old *state) error {
	s, err := r.build(nodes, old)
	if err != nil {
		return err
	}
	r.cur.Store(s)
	return nil
}

// index returns the position of id in s.nodes.
func (s *state) index(id string) (int, bool) {
	return slices.BinarySearchFunc(s.nodes, id, func(n kolco.Node, id string) int { return strings.Compare(n.ID, id) })
}
