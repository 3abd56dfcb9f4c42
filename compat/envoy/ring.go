package envoy

import (
	"fmt"
	"math"
	"strconv"

	"github.com/cespare/xxhash/v2"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
	"github.com/kolco-dev/kolco/internal/continuum"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// Envoy's default ring sizes.
const (
	DefaultMinRingSize = 1024
	DefaultMaxRingSize = 8 * 1024 * 1024
)

// RingConfig is a ring_hash configuration. The zero value means Envoy's
// defaults.
type RingConfig struct {
	// MinRingSize is minimum_ring_size; 0 means 1024.
	MinRingSize uint64
	// MaxRingSize is maximum_ring_size; 0 means 8M. Envoy's own limit is
	// 8M, and so is this package's.
	MaxRingSize uint64
}

// Ring is Envoy's ring_hash table. It is immutable and safe for concurrent
// use; lookups do not allocate.
type Ring struct {
	list nodeset.List
	ring continuum.Continuum[uint64] // owners index hosts
}

var _ kolco.Placement = (*Ring)(nil)

// NewRing builds the ring Envoy builds for these hosts, in this order. The
// error wraps [kolco.ErrNoNodes], [kolco.ErrDuplicateNode] (two hosts with
// one key), [kolco.ErrBadNodeID] (no key and no address), [kolco.ErrBadWeight]
// (weights summing above 2^32-1) or [kolco.ErrBadConfig] (min > max ring
// size, or a size above 8M).
func NewRing(hosts []Host, cfg RingConfig) (*Ring, error) {
	minSize, maxSize := cfg.MinRingSize, cfg.MaxRingSize
	if minSize == 0 {
		minSize = DefaultMinRingSize
	}
	if maxSize == 0 {
		maxSize = DefaultMaxRingSize
	}
	if minSize > maxSize || maxSize > DefaultMaxRingSize {
		return nil, fmt.Errorf("%w: envoy: ring size min %d, max %d (max at most %d)", kolco.ErrBadConfig, minSize, maxSize, DefaultMaxRingSize)
	}
	list, w, minW, _, err := normalise(hosts)
	if err != nil {
		return nil, err
	}
	scale := min(math.Ceil(float64(minW*float64(minSize)))/minW, float64(maxSize))
	var b continuum.Builder[uint64]
	b.Grow(int(math.Ceil(scale)))
	var current, target float64
	buf := make([]byte, 0, 64)
	for i, h := range hosts {
		buf = append(append(buf[:0], h.key()...), '_')
		base := len(buf)
		target += float64(scale * w[i])
		for j := uint64(0); current < target; j++ {
			buf = strconv.AppendUint(buf[:base], j, 10)
			b.Add(xxhash.Sum64(buf), i)
			current++
		}
	}
	// Envoy sorts its ring with std::stable_sort: equal hashes keep host
	// order, as the continuum keeps points in the order added.
	return &Ring{list: list, ring: b.Build(continuum.KeepAll)}, nil
}

// Size returns the number of points on the ring.
func (r *Ring) Size() int { return r.ring.Len() }

// Index returns the position of the host Envoy picks for a request whose
// hash policy hashes key (XXH64, seed 0).
func (r *Ring) Index(key []byte) int { return r.IndexHash(xxhash.Sum64(key)) }

// IndexHash returns the position of the host Envoy picks for request hash
// h: the owner of the first point >= h, wrapping.
func (r *Ring) IndexHash(h uint64) int { return r.ring.Locate(h) }

// Locate returns the host Envoy picks for key. The error is always nil.
func (r *Ring) Locate(key string) (*kolco.Node, error) {
	return r.list.At(r.Index(bytestr.Of(key))), nil
}

// LocateN appends up to n distinct hosts in Envoy's retry order: the hosts
// of the following ring points. The error wraps [kolco.ErrBadCount] when
// n < 1.
func (r *Ring) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	start := r.ring.Search(xxhash.Sum64String(key))
	return r.list.AppendN(dst, n, r.ring.Len(), func(step int) int { return r.ring.Walk(start, step) })
}

// Nodes returns the hosts sorted by key.
func (r *Ring) Nodes() []kolco.Node { return r.list.Nodes() }
