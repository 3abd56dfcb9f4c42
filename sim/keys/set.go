// Package keys holds the key samples of experiments and plans - synthetic
// keys, key files with sizes and request rates, the keys running memcached
// servers hold ([Metadump]) - and places them: where a
// placement puts every key ([Assign]), and which keys two placements put
// on different nodes ([Compare]).
//
// A sample is hashed once per hash function, on all cores, and kept with
// its sorted order, so that a ring places ten million keys in one merge of
// two sorted arrays ([ring.Ring.OwnersSorted]); other placements look keys
// up in parallel chunks. Synthetic keys live in one string, so that
// looking one up allocates nothing.
package keys

import (
	"strconv"
	"strings"
)

// Set is the key sample of an experiment or a plan: either synthetic keys
// "key:0", "key:1", ..., made from their index (so that ten million keys
// cost no memory for their names), or a list of keys, such as a key
// file's. Each key may carry a size in bytes and a request rate; without
// them every key weighs one byte and one request.
//
// A Set remembers the hashes it computed for the last hash function it
// was placed with, and their sorted order, so that many rings over the same
// keys hash and sort them once. It is not safe for concurrent use.
type Set struct {
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

// Synthetic returns n keys "key:0" ... "key:n-1".
func Synthetic(n int) *Set { return Prefix("key:", n) }

// Prefix returns n keys prefix+"0" ... prefix+"n-1", such as the
// article's "user:" keys.
func Prefix(prefix string, n int) *Set {
	k := &Set{n: n, prefix: prefix}
	k.pack()
	return k
}

// maxBlob bounds the bytes of packed synthetic keys; past it keys are
// formatted on each use instead.
const maxBlob = 1 << 31

// pack writes the synthetic keys into one string: one allocation instead
// of one per key and per lookup.
func (k *Set) pack() {
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

// List returns the given keys, without sizes or rates.
func List(keys []string) *Set { return &Set{n: len(keys), keys: keys} }

// Len returns the number of keys.
func (k *Set) Len() int { return k.n }

// Key returns key i.
func (k *Set) Key(i int) string {
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
func (k *Set) Size(i int) float64 {
	if k.Sizes == nil {
		return 1
	}
	return k.Sizes[i]
}

// Rate returns the request rate of key i: Rates[i], or 1 without rates.
func (k *Set) Rate(i int) float64 {
	if k.Rates == nil {
		return 1
	}
	return k.Rates[i]
}

// ScaledTo returns a copy of the set whose sizes are scaled so that they
// sum to total, sharing the keys, their rates and the hashes computed so
// far.
func (k *Set) ScaledTo(total float64) *Set {
	scaled := *k
	scaled.Sizes = make([]float64, k.n)
	sum := k.TotalSize()
	for i := range scaled.Sizes {
		scaled.Sizes[i] = k.Size(i) * total / sum
	}
	return &scaled
}

// TotalSize returns the sum of the key sizes.
func (k *Set) TotalSize() float64 { return sumOr(k.Sizes, k.n) }

// TotalRate returns the sum of the key rates.
func (k *Set) TotalRate() float64 { return sumOr(k.Rates, k.n) }

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
