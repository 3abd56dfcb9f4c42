package grpcring

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/continuum"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// grpc-go's ring sizes: the defaults, the largest a configuration may ask
// for, and the default of GRPC_RING_HASH_CAP.
const (
	DefaultMinRingSize = 1024
	DefaultMaxRingSize = 4096
	MaxRingSize        = 8 * 1024 * 1024
	DefaultCap         = 4096
)

// Endpoint is one endpoint of the balancer's resolver state.
type Endpoint struct {
	// HashKey is the endpoint's hash key attribute; empty means Addr.
	HashKey string
	// Addr is the endpoint's first address.
	Addr string
	// Weight is the endpoint's weight attribute; 0 means 1.
	Weight uint32
}

func (e Endpoint) key() string { return cmp.Or(e.HashKey, e.Addr) }

// Config is the ring_hash configuration. The zero value is grpc-go's
// default.
type Config struct {
	// MinRingSize is minRingSize; 0 means 1024.
	MinRingSize uint64
	// MaxRingSize is maxRingSize; 0 means 4096.
	MaxRingSize uint64
	// Cap is the process's GRPC_RING_HASH_CAP; 0 means its default, 4096.
	// It caps both sizes after they are checked.
	Cap uint64
}

// sizes returns the ring sizes grpc-go uses for c, or the error its
// configuration parser gives.
func (c Config) sizes() (lo, hi uint64, err error) {
	if c.MinRingSize > MaxRingSize || c.MaxRingSize > MaxRingSize {
		return 0, 0, fmt.Errorf("%w: grpcring: ring size above %d (min %d, max %d)", kolco.ErrBadConfig, MaxRingSize, c.MinRingSize, c.MaxRingSize)
	}
	if c.Cap > MaxRingSize {
		return 0, 0, fmt.Errorf("%w: grpcring: cap %d above %d", kolco.ErrBadConfig, c.Cap, MaxRingSize)
	}
	lo, hi, ringCap := cmp.Or(c.MinRingSize, DefaultMinRingSize), cmp.Or(c.MaxRingSize, DefaultMaxRingSize), cmp.Or(c.Cap, DefaultCap)
	if lo > hi {
		return 0, 0, fmt.Errorf("%w: grpcring: min ring size %d above max %d", kolco.ErrBadConfig, lo, hi)
	}
	return min(lo, ringCap), min(hi, ringCap), nil
}

// Ring is grpc-go's ring_hash ring over a set of endpoints. It is immutable
// and safe for concurrent use; lookups do not allocate.
type Ring struct {
	list nodeset.List                // the endpoints sorted by hash key
	ring continuum.Continuum[uint64] // owners index list
}

var (
	_ kolco.Placement    = (*Ring)(nil)
	_ kolco.IndexLocator = (*Ring)(nil)
)

// New builds the ring grpc-go builds for endpoints, in any order. Each
// endpoint is a node whose ID is its hash key, Addr its address and Weight
// its weight. The error wraps [kolco.ErrNoNodes], [kolco.ErrDuplicateNode]
// (two endpoints with one hash key), [kolco.ErrBadNodeID] (no hash key and
// no address), [kolco.ErrBadWeight] (weights summing above 2^32-1) or
// [kolco.ErrBadConfig] (a ring size grpc-go's configuration refuses).
func New(endpoints []Endpoint, cfg Config) (*Ring, error) {
	minSize, maxSize, err := cfg.sizes()
	if err != nil {
		return nil, err
	}
	sorted := slices.Clone(endpoints)
	slices.SortFunc(sorted, func(a, b Endpoint) int { return strings.Compare(a.key(), b.key()) })
	nodes := make([]kolco.Node, len(sorted))
	var sum uint64
	for i, e := range sorted {
		w := max(e.Weight, 1)
		nodes[i] = kolco.Node{ID: e.key(), Addr: e.Addr, Weight: float64(w)}
		sum += uint64(w)
	}
	list, err := nodeset.NewList(nodes, nil)
	if err != nil {
		return nil, fmt.Errorf("grpcring: %w", err)
	}
	if sum > math.MaxUint32 {
		return nil, fmt.Errorf("grpcring: %w: weights sum to %d, above 2^32-1", kolco.ErrBadWeight, sum)
	}
	// As grpc-go's normalizeWeights: the smallest share starts at 1.
	weights := make([]float64, len(sorted))
	minWeight := 1.0
	for i, e := range sorted {
		weights[i] = float64(max(e.Weight, 1)) / float64(uint32(sum))
		minWeight = math.Min(minWeight, weights[i])
	}
	scale := math.Min(math.Ceil(minWeight*float64(minSize))/minWeight, float64(maxSize))
	var b continuum.Builder[uint64]
	b.Grow(int(math.Ceil(scale)))
	buf := make([]byte, 0, 64)
	var current, target float64
	for i, e := range sorted {
		target += scale * weights[i] // written as grpc-go writes it, for the same rounding
		buf = append(append(buf[:0], e.key()...), '_')
		base := len(buf)
		for idx := 0; current < target; idx++ {
			buf = strconv.AppendInt(buf[:base], int64(idx), 10)
			b.Add(xxhash.Sum64(buf), i)
			current++
		}
	}
	return &Ring{list: list, ring: b.Build(continuum.KeepAll)}, nil
}

// RequestHash returns the hash grpc-go computes for a request whose hash
// header has values: XXH64 of the values joined by ",".
func RequestHash(values ...string) uint64 { return xxhash.Sum64String(strings.Join(values, ",")) }

// Size returns the number of entries on the ring.
func (r *Ring) Size() int { return r.ring.Len() }

// IndexHash returns the position, in [Ring.Nodes], of the endpoint picked
// for request hash h: the owner of the first entry >= h, wrapping.
func (r *Ring) IndexHash(h uint64) int { return r.ring.Locate(h) }

// LocateIndex returns the position, in [Ring.Nodes], of the endpoint a
// request whose hash header holds key is sent to. The error is always nil.
func (r *Ring) LocateIndex(key string) (int, error) {
	return r.IndexHash(xxhash.Sum64String(key)), nil
}

// Locate returns the endpoint a request whose hash header holds key is
// sent to. The error is always nil.
func (r *Ring) Locate(key string) (*kolco.Node, error) {
	i, _ := r.LocateIndex(key)
	return r.list.At(i), nil
}

// LocateN appends up to n distinct endpoints in the order grpc-go tries
// them when the first is in transient failure: the endpoints of the
// following ring entries. The error wraps [kolco.ErrBadCount] when n < 1.
func (r *Ring) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	start := r.ring.Search(xxhash.Sum64String(key))
	return r.list.AppendN(dst, n, r.ring.Len(), func(step int) int { return r.ring.Walk(start, step) })
}

// Nodes returns the endpoints sorted by hash key.
func (r *Ring) Nodes() []kolco.Node { return r.list.Nodes() }
