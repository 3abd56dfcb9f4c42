package ring

import (
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
	"github.com/kolco-dev/kolco/keyhash"
)

// DefaultVNodes is the number of points per unit of weight when
// [Config.VNodes] is zero: 160, the ketama count used by memcached clients
// and nginx, which keeps the spread of 10 nodes near 2.5%.
const DefaultVNodes = 160

// maxPoints bounds the points of one ring so that a mistyped weight or vnode
// count fails with an error instead of exhausting memory: a change needs
// about 30 bytes per point while it is built (the new points and owners, the
// sorted new pairs, the index), so 2^25 points peak near 1 GiB.
const maxPoints = 1 << 25

// Config sets up a [Ring]. The zero value means the documented defaults.
type Config struct {
	// VNodes is the number of points per unit of weight; 0 means
	// DefaultVNodes. Negative values are rejected with kolco.ErrBadConfig.
	VNodes int
	// Hash hashes keys and point labels; nil means keyhash.XXH3. The
	// ring's order is that of the whole 64-bit value, so a weak hash
	// (keyhash.FNV1a, keyhash.CRC32) is finalized with keyhash.Finalized:
	// the raw values of "ID#i" labels crowd together (fnv1a gave the
	// largest of 11 nodes 1.85 times the mean share), and crc32's fill
	// only the first 2^32 of the circle. A mixed hash, as in ArticleConfig, is used
	// as it is.
	Hash keyhash.Func
	// Label appends the label of point i of node id to dst; nil means
	// "id#i", the article's labels. It must be deterministic.
	//
	// A change that adds many points calls Hash and Label from several
	// goroutines at once, so both must be safe for concurrent use; neither
	// may keep its argument, which aliases a buffer that is reused.
	Label func(dst []byte, id string, i int) []byte
	// ZoneAware makes LocateN take nodes of distinct zones first and
	// repeat a zone only once every zone has been taken.
	ZoneAware bool
}

// ArticleConfig returns the configuration of the article's Python ring: 100
// points per unit of weight labelled "ID#i", hashed with keyhash.MD5.
func ArticleConfig() Config {
	return Config{VNodes: 100, Hash: keyhash.MD5}
}

// DefaultLabel appends "id#i" to dst.
func DefaultLabel(dst []byte, id string, i int) []byte {
	dst = append(dst, id...)
	dst = append(dst, '#')
	return strconv.AppendInt(dst, int64(i), 10)
}

func (c Config) withDefaults() (Config, error) {
	if c.VNodes < 0 {
		return c, fmt.Errorf("%w: vnodes must be at least 1 (got %d)", kolco.ErrBadConfig, c.VNodes)
	}
	if c.VNodes == 0 {
		c.VNodes = DefaultVNodes
	}
	if c.Hash == nil {
		c.Hash = keyhash.XXH3
	}
	if c.Label == nil {
		c.Label = DefaultLabel
	}
	return c, nil
}

// Ring is a consistent hash ring. It is safe for concurrent use: lookups take
// no lock and see either the whole of a change or none of it; changes are
// serialized. Create one with [New]; the zero Ring is not usable.
type Ring struct {
	cfg  Config
	keys keyHash
	m    nodeset.Engine[Snapshot]
}

// keyHash is the hash a ring places keys and points with.
type keyHash struct {
	// fn is cfg.Hash, finalized when it is a weak hash (see Config.Hash).
	fn keyhash.Func
	// xxh3 reports that cfg.Hash is keyhash.XXH3, the default, which
	// lookups then call directly: a direct call costs less than a call
	// through a function value.
	xxh3 bool
}

// hash returns the hash of key.
func (k *keyHash) hash(key string) uint64 {
	if k.xxh3 {
		return keyhash.XXH3(key)
	}
	return k.fn(key)
}

var (
	_ kolco.Placement    = (*Ring)(nil)
	_ kolco.Mutable      = (*Ring)(nil)
	_ kolco.IDLocator    = (*Ring)(nil)
	_ kolco.IndexLocator = (*Ring)(nil)
)

// New returns a ring holding nodes. The error wraps kolco.ErrBadConfig,
// kolco.ErrBadNodeID, kolco.ErrBadWeight or kolco.ErrDuplicateNode.
func New(nodes []kolco.Node, cfg Config) (*Ring, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	r := &Ring{cfg: cfg, keys: keyHash{
		fn:   keyhash.Finalized(cfg.Hash),
		xxh3: reflect.ValueOf(cfg.Hash).Pointer() == reflect.ValueOf(keyhash.XXH3).Pointer(),
	}}
	r.m = nodeset.Engine[Snapshot]{
		Name: "ring",
		Set:  func(s *Snapshot) nodeset.Set { return s.set },
		Next: r.next,
	}
	if err := r.m.Init(&Snapshot{cfg: &r.cfg}, nodes); err != nil {
		return nil, err
	}
	return r, nil
}

// pointCount returns round(V × weight), at least 1.
func pointCount(vnodes int, n kolco.Node) (int, error) {
	c := math.Round(float64(vnodes) * n.EffectiveWeight())
	if c > maxPoints {
		return 0, fmt.Errorf("%w: node %q would get %.0f points (at most %d)", kolco.ErrBadConfig, n.ID, c, maxPoints)
	}
	return max(int(c), 1), nil
}

// Locate returns the node owning key: the ring's own, shared by every
// lookup and never changed (a change builds new nodes), which the caller
// must not modify. The error is kolco.ErrNoNodes when the ring is empty.
func (r *Ring) Locate(key string) (*kolco.Node, error) {
	if n, _ := r.lookup(key); n != nil {
		return n, nil
	}
	return nil, kolco.ErrNoNodes
}

// LocateID returns the ID of the node owning key, for callers that keep
// their own state per node ID. The error is kolco.ErrNoNodes when the ring
// is empty.
func (r *Ring) LocateID(key string) (string, error) {
	if n, _ := r.lookup(key); n != nil {
		return n.ID, nil
	}
	return "", kolco.ErrNoNodes
}

// LocateIndex returns the position in [Ring.Nodes] of the node owning key,
// for callers that keep their own table per node. The error is
// kolco.ErrNoNodes, with -1, when the ring is empty.
func (r *Ring) LocateIndex(key string) (int, error) {
	if _, i := r.lookup(key); i >= 0 {
		return i, nil
	}
	return -1, kolco.ErrNoNodes
}

// LocateHash returns the node owning a key whose hash is h, as computed by
// [Ring.Hash]. It lets a caller that looks up one key in many rings hash
// it once. The node is the ring's own, as Locate's. The error is
// kolco.ErrNoNodes when the ring is empty.
func (r *Ring) LocateHash(h uint64) (*kolco.Node, error) {
	if n, _ := r.lookupHash(h); n != nil {
		return n, nil
	}
	return nil, kolco.ErrNoNodes
}

// Hash returns the hash of key that the ring places.
func (r *Ring) Hash(key string) uint64 { return r.keys.hash(key) }

// LocateN appends to dst up to n distinct nodes for key in preference order
// (see the package documentation) and returns the extended slice. If n
// exceeds the number of nodes, every node is appended once. It allocates
// only when dst lacks capacity. The error is kolco.ErrBadCount when n < 1
// and kolco.ErrNoNodes when the ring is empty.
func (r *Ring) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	return r.LocateHashN(dst, r.keys.hash(key), n)
}

// LocateHashN is [Ring.LocateN] for a precomputed key hash.
func (r *Ring) LocateHashN(dst []kolco.Node, h uint64, n int) ([]kolco.Node, error) {
	if n < 1 {
		return dst, fmt.Errorf("%w (got %d)", kolco.ErrBadCount, n)
	}
	s := r.m.Load()
	if len(s.points) == 0 {
		return dst, kolco.ErrNoNodes
	}
	return s.walk(dst, s.successor(h), n, r.cfg.ZoneAware), nil
}

// Nodes returns a copy of the nodes, sorted by ID.
func (r *Ring) Nodes() []kolco.Node { return r.m.Load().set.Nodes() }

// Len returns the number of nodes.
func (r *Ring) Len() int { return len(r.m.Load().nodes) }

// Points returns the number of points on the ring.
func (r *Ring) Points() int { return len(r.m.Load().points) }

// Config returns the ring's configuration with defaults filled in.
func (r *Ring) Config() Config { return r.cfg }
