package sim

import (
	"cmp"
	"math/bits"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// KeySet is the key sample of an experiment or a plan: either synthetic
// keys "key:0", "key:1", ... generated on demand (so that ten million keys
// cost no memory for their names), or the keys of a file. Each key may carry
// a size in bytes and a request rate; without them every key weighs one
// byte and one request.
//
// A KeySet remembers the hashes it computed for the last hash function it
// was placed with, and their sorted order, so that many rings over the same
// keys hash and sort them once. It is not safe for concurrent use.
type KeySet struct {
	n      int
	prefix string
	keys   []string
	// blob holds synthetic keys back to back, key i being
	// blob[ends[i-1]:ends[i]], so that looking one up allocates nothing.
	blob string
	ends []uint32
	// Sizes, when not nil, holds each key's size in bytes.
	Sizes []float64
	// Rates, when not nil, holds each key's request rate (any unit).
	Rates []float64

	cache hashCache
}

// hashCache holds the hashes of every key under one hash function,
// recognised by the hashes of a few probe keys, and their sorted order.
type hashCache struct {
	probe  []uint64
	hashes []uint64
	sorted []uint64 // hashes sorted ascending
	pos    []int32  // pos[i] is the key whose hash is sorted[i]
}

// SyntheticKeys returns n keys "key:0" ... "key:n-1".
func SyntheticKeys(n int) *KeySet { return PrefixKeys("key:", n) }

// PrefixKeys returns n keys prefix+"0" ... prefix+"n-1", such as the
// article's "user:" keys.
func PrefixKeys(prefix string, n int) *KeySet {
	k := &KeySet{n: n, prefix: prefix}
	k.pack()
	return k
}

// maxBlob bounds the bytes of packed synthetic keys; past it keys are
// formatted on each use instead.
const maxBlob = 1 << 31

// pack writes the synthetic keys into one string: one allocation instead
// of one per key and per lookup.
func (k *KeySet) pack() {
	digits := len(strconv.Itoa(max(k.n-1, 0)))
	if size := k.n * (len(k.prefix) + digits); size >= maxBlob {
		return
	}
	var b strings.Builder
	b.Grow(k.n * (len(k.prefix) + digits))
	k.ends = make([]uint32, k.n)
	var num []byte
	for i := range k.n {
		b.WriteString(k.prefix)
		num = strconv.AppendInt(num[:0], int64(i), 10)
		b.Write(num)
		k.ends[i] = uint32(b.Len())
	}
	k.blob = b.String()
}

// ListKeys returns the given keys.
func ListKeys(keys []string) *KeySet { return &KeySet{n: len(keys), keys: keys} }

// Len returns the number of keys.
func (k *KeySet) Len() int { return k.n }

// Key returns key i.
func (k *KeySet) Key(i int) string {
	if k.keys != nil {
		return k.keys[i]
	}
	if k.ends != nil {
		lo := uint32(0)
		if i > 0 {
			lo = k.ends[i-1]
		}
		return k.blob[lo:k.ends[i]]
	}
	return k.prefix + strconv.Itoa(i)
}

// Size returns the size of key i: Sizes[i], or 1 without sizes.
func (k *KeySet) Size(i int) float64 {
	if k.Sizes == nil {
		return 1
	}
	return k.Sizes[i]
}

// Rate returns the request rate of key i: Rates[i], or 1 without rates.
func (k *KeySet) Rate(i int) float64 {
	if k.Rates == nil {
		return 1
	}
	return k.Rates[i]
}

// TotalSize returns the sum of the key sizes.
func (k *KeySet) TotalSize() float64 { return sumOr(k.Sizes, k.n) }

// TotalRate returns the sum of the key rates.
func (k *KeySet) TotalRate() float64 { return sumOr(k.Rates, k.n) }

func sumOr(xs []float64, n int) float64 {
	if xs == nil {
		return float64(n)
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// hashesFor returns the hash of every key under hash, computed on all
// cores, reusing the last result when hash gives the same probe values.
func (k *KeySet) hashesFor(hash func(string) uint64) []uint64 {
	probe := make([]uint64, 0, 4)
	for _, s := range []string{"", "kolco", "key:0", "\x00\xff"} {
		probe = append(probe, hash(s))
	}
	if slices.Equal(probe, k.cache.probe) {
		return k.cache.hashes
	}
	out := make([]uint64, k.n)
	parallel(k.n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = hash(k.Key(i))
		}
	})
	k.cache = hashCache{probe: probe, hashes: out}
	return out
}

// sortedFor returns the hashes under hash sorted ascending, with the key
// index of each.
func (k *KeySet) sortedFor(hash func(string) uint64) ([]uint64, []int32) {
	hashes := k.hashesFor(hash)
	if k.cache.sorted != nil {
		return k.cache.sorted, k.cache.pos
	}
	pairs := bucketSort(hashes)
	sorted, pos := make([]uint64, len(pairs)), make([]int32, len(pairs))
	for i, x := range pairs {
		sorted[i], pos[i] = x.h, x.p
	}
	k.cache.sorted, k.cache.pos = sorted, pos
	return sorted, pos
}

// hp is a hash and the index of its key.
type hp struct {
	h uint64
	p int32
}

func cmpHP(a, b hp) int { return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.p, b.p)) }

// bucketSort returns (hash, index) pairs sorted by hash, then index. Hashes
// are close to uniform, so one counting pass on their top bits leaves
// buckets of about 16 pairs, each sorted on its own, on all cores: O(n)
// instead of O(n log n). Skewed hashes (a 32-bit hash in 64 bits) only make
// the buckets larger; the order is exact either way.
func bucketSort(hashes []uint64) []hp {
	top := uint64(0)
	for _, h := range hashes {
		top |= h
	}
	b := min(max(bits.Len(uint(len(hashes)))-4, 1), 22)
	shift := max(bits.Len64(top)-b, 0)
	start := make([]int, 1<<b+1)
	for _, h := range hashes {
		start[h>>shift+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	pairs := make([]hp, len(hashes))
	next := slices.Clone(start[:len(start)-1])
	for i, h := range hashes {
		j := h >> shift
		pairs[next[j]] = hp{h, int32(i)}
		next[j]++
	}
	buckets := len(start) - 1
	parallel(buckets, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			if run := pairs[start[j]:start[j+1]]; len(run) > 1 {
				slices.SortFunc(run, cmpHP)
			}
		}
	})
	return pairs
}

// chunks splits [0, n) into one range per core (at least one range).
func chunks(n int) [][2]int {
	workers := runtime.GOMAXPROCS(0)
	if n < 4096 {
		workers = 1
	}
	size := (n + workers - 1) / max(workers, 1)
	var out [][2]int
	for lo := 0; lo < n; lo += size {
		out = append(out, [2]int{lo, min(lo+size, n)})
	}
	if len(out) == 0 {
		out = append(out, [2]int{0, 0})
	}
	return out
}

// parallel calls f on one range of [0, n) per core and waits.
func parallel(n int, f func(lo, hi int)) {
	var wg sync.WaitGroup
	for _, r := range chunks(n) {
		wg.Go(func() { f(r[0], r[1]) })
	}
	wg.Wait()
}
