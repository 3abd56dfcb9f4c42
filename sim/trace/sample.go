package trace

import (
	"container/heap"
	"math"

	"github.com/zeebo/xxh3"
)

// Sample is a spatially hashed sample of a request stream (SHARDS): every
// request of the keys whose sampling hash is at most a threshold, so that
// a key is in the sample with all its requests or not at all, and a cache
// replayed on the sample at Rate times its size sees what the whole cache
// would, scaled by Rate. The threshold starts at the top, every key
// sampled, and falls as the keys outnumber the sample's size, the key of
// the largest hash leaving each time (fixed-size SHARDS), so that a short
// trace is replayed whole and a long one costs no more than its bound.
type Sample struct {
	// Rate is the share of the key space sampled, in (0, 1].
	Rate float64
	// Requests is the number of requests in the whole stream; Rate times
	// it is what the sample is expected to hold, which SHARDS's
	// adjustment compares with what it does hold.
	Requests int64
	// Refs are the sampled requests, in the stream's order.
	Refs []Ref
}

// Ref is one sampled request.
type Ref struct {
	// Key indexes Profile.Keys.
	Key int32
	// Op is what the request does to the key.
	Op Op
	// Size is the value's size in the request, -1 when the trace does not
	// say.
	Size int64
}

// sampleSeed seeds the sampling hash: a hash of its own, so that the
// sample does not follow a placement that hashes keys with xxh3 too.
const sampleSeed = 0x73686172647321

// SampleHash returns the hash that decides whether a key is sampled.
func SampleHash(key string) uint64 { return xxh3.HashStringSeed(key, sampleSeed) }

// SampleHashBytes is SampleHash of a key held in bytes, which it does not
// copy.
func SampleHashBytes(key []byte) uint64 { return xxh3.HashSeed(key, sampleSeed) }

// sampler keeps the sample while a stream is read.
type sampler struct {
	max       int
	threshold uint64   // a key is sampled when its hash is at most this
	hashes    []uint64 // each key's sampling hash, by key index
	in        keyHeap  // the sampled keys, the largest hash on top
	refs      []Ref
	compacted int // len(refs) after the last compaction
}

func newSampler(maxKeys int) *sampler { return &sampler{max: maxKeys, threshold: math.MaxUint64} }

// addKey notes a new key, the next index; it enters the sample if its
// hash is low enough, pushing out the key of the largest hash when the
// sample is full.
func (s *sampler) addKey(key string) {
	h := SampleHash(key)
	i := int32(len(s.hashes))
	s.hashes = append(s.hashes, h)
	if h > s.threshold {
		return
	}
	heap.Push(&s.in, keyHash{i, h})
	if len(s.in) > s.max {
		out := heap.Pop(&s.in).(keyHash)
		if out.hash == 0 { // the least hash of all: keep one key rather than none
			heap.Push(&s.in, out)
			return
		}
		s.threshold = out.hash - 1
		for len(s.in) > 0 && s.in[0].hash > s.threshold { // keys of the same hash leave with it
			heap.Pop(&s.in)
		}
	}
}

// add samples a request of key i.
func (s *sampler) add(i int32, r Request) {
	if s.hashes[i] > s.threshold {
		return
	}
	s.refs = append(s.refs, Ref{Key: i, Op: r.Op, Size: r.Size})
	if len(s.refs) >= 2*max(s.compacted, 1<<16) {
		s.compact()
	}
}

// compact drops the requests of the keys that left the sample.
func (s *sampler) compact() {
	kept := s.refs[:0]
	for _, r := range s.refs {
		if s.hashes[r.Key] <= s.threshold {
			kept = append(kept, r)
		}
	}
	s.refs = kept
	s.compacted = len(kept)
}

// sample returns the sample of a stream of n requests.
func (s *sampler) sample(n int64) Sample {
	s.compact()
	rate := 1.0
	if s.threshold < math.MaxUint64 {
		rate = (float64(s.threshold) + 1) / (1 << 64)
	}
	return Sample{Rate: rate, Requests: n, Refs: s.refs}
}

// keyHash is a sampled key and its hash.
type keyHash struct {
	key  int32
	hash uint64
}

// keyHeap is a max-heap of sampled keys by hash.
type keyHeap []keyHash

func (h keyHeap) Len() int           { return len(h) }
func (h keyHeap) Less(i, j int) bool { return h[i].hash > h[j].hash }
func (h keyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *keyHeap) Push(x any)        { *h = append(*h, x.(keyHash)) }
func (h *keyHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
