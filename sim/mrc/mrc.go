package mrc

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
)

// ErrBadConfig is returned for a stream or a configuration the estimators
// cannot replay: a rate outside (0, 1], a size that is not positive, a
// negative or NaN capacity.
var ErrBadConfig = errors.New("mrc: bad configuration")

// Op is what a sampled request does.
type Op uint8

// The operations a cache replays.
const (
	// Get reads the key: a hit or a miss.
	Get Op = iota
	// Set stores it.
	Set
	// Delete removes it.
	Delete
)

// Ref is one sampled request.
type Ref struct {
	// Key identifies the key: equal keys, equal Keys.
	Key int32
	// Op is what the request does.
	Op Op
	// Size is the bytes the key's item takes in the cache's memory (see
	// MemcachedFootprint): more than zero.
	Size float64
}

// Policy is how a cache chooses what to evict.
type Policy int

// The policies.
const (
	// Memcached is memcached 1.5+'s segmented LRU (see the package doc).
	Memcached Policy = iota
	// LRU evicts the least recently requested item.
	LRU
)

// String returns the policy's name.
func (p Policy) String() string {
	if p == LRU {
		return "lru"
	}
	return "memcached"
}

// ParsePolicy returns the policy called name: "memcached" or "lru".
func ParsePolicy(name string) (Policy, error) {
	switch name {
	case "memcached":
		return Memcached, nil
	case "lru":
		return LRU, nil
	}
	return 0, fmt.Errorf("%w: eviction policy %q (known: memcached, lru)", ErrBadConfig, name)
}

// Stream is a sampled request stream.
type Stream struct {
	// Refs are the sampled requests in order.
	Refs []Ref
	// Rate is the share of the key space sampled, in (0, 1].
	Rate float64
	// Gets is how many reads the whole stream the sample comes from
	// holds; Rate times it is what SHARDS's adjustment expects the sample
	// to hold. Zero leaves the adjustment out.
	Gets float64
	// FillOnMiss inserts a key that a Get misses, as a client does that
	// fills the cache itself; false leaves that to the stream's Sets. Only
	// the Memcached policy reads it: for LRU every request brings its key
	// to the top.
	FillOnMiss bool
}

// Curve returns the miss ratio of a cache of policy p at each of the
// memory sizes, in bytes, over the stream: the misses over the reads.
// With no read it returns NaN for every size. The error wraps
// ErrBadConfig for a rate outside (0, 1], a Ref of a size not above zero,
// or a size that is negative or NaN.
func Curve(s Stream, p Policy, sizes []float64) ([]float64, error) {
	if !(s.Rate > 0 && s.Rate <= 1) || s.Gets < 0 || math.IsNaN(s.Gets) || math.IsInf(s.Gets, 0) {
		return nil, fmt.Errorf("%w: rate %v outside (0, 1] or reads %v", ErrBadConfig, s.Rate, s.Gets)
	}
	for _, c := range sizes {
		if !(c >= 0) {
			return nil, fmt.Errorf("%w: a cache of %v bytes", ErrBadConfig, c)
		}
	}
	refs, err := dense(s.Refs)
	if err != nil {
		return nil, err
	}
	gets := 0.0
	for _, r := range refs {
		if r.Op == Get {
			gets++
		}
	}
	expected := gets
	if s.Gets > 0 {
		expected = s.Gets * s.Rate
	}
	out := make([]float64, len(sizes))
	if gets == 0 || expected <= 0 {
		for i := range out {
			out[i] = math.NaN()
		}
		return out, nil
	}
	var misses []float64
	if p == LRU {
		misses = lruMisses(refs, s.Rate, sizes)
	} else {
		misses = make([]float64, len(sizes))
		var wg sync.WaitGroup
		sem := make(chan struct{}, runtime.GOMAXPROCS(0))
		for i, c := range sizes {
			wg.Go(func() {
				sem <- struct{}{}
				misses[i] = float64(replaySegmented(refs, c*s.Rate, s.FillOnMiss))
				<-sem
			})
		}
		wg.Wait()
	}
	for i := range out {
		out[i] = math.Min(1, misses[i]/expected)
	}
	return out, nil
}

// dense renumbers the keys of refs 0, 1, ... in order of first request,
// so that the replays index arrays rather than maps, and checks sizes.
func dense(refs []Ref) ([]Ref, error) {
	ids := map[int32]int32{}
	out := slices.Clone(refs)
	for i, r := range refs {
		if !(r.Size > 0) || math.IsInf(r.Size, 0) {
			return nil, fmt.Errorf("%w: request %d: an item of %v bytes", ErrBadConfig, i, r.Size)
		}
		id, ok := ids[r.Key]
		if !ok {
			id = int32(len(ids))
			ids[r.Key] = id
		}
		out[i].Key = id
	}
	return out, nil
}
