package proxy

import (
	"cmp"
	"slices"
)

// topKeys finds a stream's heaviest keys with Space-Saving (Metwally,
// Agrawal and El Abbadi, "Efficient Computation of Frequent and Top-k
// Elements in Data Streams", ICDT 2005): k counters; a key that has one
// adds its weight, a key that has none takes the least counter's, adding
// its weight to the count it inherits, which is kept as the error. A key
// weighing more than 1/k of the stream always holds a counter, and its
// count exceeds its weight by at most its error.
//
// The counters stay in place; a min-heap of their indexes finds the least,
// and an open-addressed table of the keys' 64-bit hashes finds a key's
// counter, so that a key's weight is added without a map's allocations.
// Keys are told apart by their hash: two keys of one hash share a counter,
// a chance of about k/2^64 per key.
type topKeys struct {
	counters []topCounter
	heap     []int32 // counter indexes, the least count first
	table    []int32 // counter index + 1 by hash, 0 empty; linear probing
	mask     uint64
}

// topCounter is one key's counter.
type topCounter struct {
	hash         uint64
	count, error uint64
	at           int32 // the counter's place in heap
	// key is the key's first bytes, at most maxTopKey; long is set when
	// the key was longer.
	key  []byte
	long bool
}

// maxTopKey is the most bytes of a key a counter keeps: memcached's
// longest key.
const maxTopKey = 250

// newTopKeys returns a Space-Saving summary of k counters, their keys'
// buffers made at once so that counting allocates nothing.
func newTopKeys(k int) *topKeys {
	size := 1
	for size < 2*k {
		size <<= 1
	}
	t := &topKeys{counters: make([]topCounter, 0, k), heap: make([]int32, 0, k), table: make([]int32, size), mask: uint64(size - 1)}
	arena := make([]byte, k*64)
	for i := range k {
		t.counters = append(t.counters, topCounter{key: arena[i*64 : i*64 : (i+1)*64]})
	}
	t.counters = t.counters[:0]
	return t
}

// add adds w to the count of key, whose hash is h.
func (t *topKeys) add(h uint64, key []byte, w uint64) {
	if i := t.find(h); i >= 0 {
		t.counters[i].count += w
		t.down(int(t.counters[i].at))
		return
	}
	var i int32
	if len(t.counters) < cap(t.counters) {
		i = int32(len(t.counters))
		t.counters = t.counters[:i+1]
		c := &t.counters[i]
		c.count, c.error, c.at = 0, 0, int32(len(t.heap))
		t.heap = append(t.heap, i)
	} else {
		i = t.heap[0]
		t.remove(t.counters[i].hash)
		c := &t.counters[i]
		c.error = c.count
	}
	c := &t.counters[i]
	c.hash = h
	c.count += w
	c.long = len(key) > maxTopKey
	c.key = append(c.key[:0], key[:min(len(key), maxTopKey)]...)
	t.insert(h, i)
	t.up(int(c.at))
	t.down(int(c.at))
}

// find returns the index of the counter of hash h, or -1.
func (t *topKeys) find(h uint64) int32 {
	for j := h & t.mask; t.table[j] != 0; j = (j + 1) & t.mask {
		if i := t.table[j] - 1; t.counters[i].hash == h {
			return i
		}
	}
	return -1
}

// insert enters counter i under hash h.
func (t *topKeys) insert(h uint64, i int32) {
	j := h & t.mask
	for t.table[j] != 0 {
		j = (j + 1) & t.mask
	}
	t.table[j] = i + 1
}

// remove takes hash h out of the table, shifting back the entries after
// it that probed past its place, so that no tombstone is left.
func (t *topKeys) remove(h uint64) {
	j := h & t.mask
	for t.table[j] != 0 && t.counters[t.table[j]-1].hash != h {
		j = (j + 1) & t.mask
	}
	if t.table[j] == 0 {
		return
	}
	hole := j
	for k := (j + 1) & t.mask; t.table[k] != 0; k = (k + 1) & t.mask {
		home := t.counters[t.table[k]-1].hash & t.mask
		// The entry at k may fill the hole unless its home lies
		// cyclically in (hole, k].
		if (k-home)&t.mask >= (k-hole)&t.mask {
			t.table[hole] = t.table[k]
			hole = k
		}
	}
	t.table[hole] = 0
}

func (t *topKeys) less(a, b int) bool {
	return t.counters[t.heap[a]].count < t.counters[t.heap[b]].count
}

func (t *topKeys) swap(a, b int) {
	t.heap[a], t.heap[b] = t.heap[b], t.heap[a]
	t.counters[t.heap[a]].at, t.counters[t.heap[b]].at = int32(a), int32(b)
}

func (t *topKeys) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !t.less(i, parent) {
			return
		}
		t.swap(i, parent)
		i = parent
	}
}

func (t *topKeys) down(i int) {
	n := len(t.heap)
	for {
		least := i
		if l := 2*i + 1; l < n && t.less(l, least) {
			least = l
		}
		if r := 2*i + 2; r < n && t.less(r, least) {
			least = r
		}
		if least == i {
			return
		}
		t.swap(i, least)
		i = least
	}
}

// hotKey is a counted key as the summary reports it.
type hotKey struct {
	key          string
	long         bool
	count, error uint64
}

// top returns the counted keys, the heaviest first.
func (t *topKeys) top() []hotKey {
	out := make([]hotKey, 0, len(t.counters))
	for _, c := range t.counters {
		out = append(out, hotKey{key: string(c.key), long: c.long, count: c.count, error: c.error})
	}
	slices.SortFunc(out, func(a, b hotKey) int { return cmp.Compare(b.count, a.count) })
	return out
}
