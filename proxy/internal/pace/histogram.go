// Package pace sets the speed of work done beside the clients' requests -
// a store's move - from the clients' own latency, as a TCP sender sets its
// congestion window from loss (additive increase, multiplicative
// decrease: Chiu and Jain, "Analysis of the Increase and Decrease
// Algorithms for Congestion Avoidance in Computer Networks", 1989). The
// signal is the clients' p99 over short intervals, read from a
// [Histogram] the request path feeds with one atomic add; the [Window]
// halves when it passes a bound and grows while it stays under.
package pace

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
)

// subBuckets is how many buckets split each power of two of nanoseconds:
// eight keep a quantile within 12.5% of the truth, finer than a p99 of a
// few hundred requests is anyway.
const (
	subBits    = 3
	subBuckets = 1 << subBits
	// buckets reach 2^36 ns, about 69 s; a longer request counts there.
	buckets = (36 - subBits + 1) * subBuckets
)

// Histogram counts durations in buckets an eighth of a power of two wide.
// Observe is one atomic add, safe from any goroutine; a reader takes
// [Histogram.Snapshot]s and subtracts them to look at an interval. The
// zero value is ready.
type Histogram struct {
	counts [buckets]atomic.Uint64
}

// Counts are a histogram's counts at one moment.
type Counts [buckets]uint64

// bucketOf returns the bucket of d.
func bucketOf(d time.Duration) int {
	v := uint64(max(d, 0))
	if v < subBuckets {
		return int(v)
	}
	e := bits.Len64(v) - 1 // v's highest bit
	i := (e-subBits+1)*subBuckets + int(v>>(e-subBits)&(subBuckets-1))
	return min(i, buckets-1)
}

// upper returns the smallest duration past bucket i: a quantile read
// from the buckets errs high, never low.
func upper(i int) time.Duration {
	if i < subBuckets {
		return time.Duration(i + 1)
	}
	e := i/subBuckets + subBits - 1
	m := uint64(i%subBuckets + subBuckets + 1)
	return time.Duration(m << (e - subBits))
}

// Observe counts d.
func (h *Histogram) Observe(d time.Duration) {
	h.counts[bucketOf(d)].Add(1)
}

// Snapshot returns the counts now.
func (h *Histogram) Snapshot() Counts {
	var c Counts
	for i := range h.counts {
		c[i] = h.counts[i].Load()
	}
	return c
}

// Sub returns the counts observed between prev and c.
func (c Counts) Sub(prev Counts) Counts {
	for i := range c {
		c[i] -= prev[i]
	}
	return c
}

// Add returns the sum of c and o.
func (c Counts) Add(o Counts) Counts {
	for i := range c {
		c[i] += o[i]
	}
	return c
}

// Total returns how many durations c counts.
func (c Counts) Total() uint64 {
	var n uint64
	for _, v := range c {
		n += v
	}
	return n
}

// Quantile returns the q-quantile of c (0 < q <= 1), rounded up to its
// bucket's end; 0 when c counts nothing.
func (c Counts) Quantile(q float64) time.Duration {
	total := c.Total()
	if total == 0 {
		return 0
	}
	rank := uint64(q*float64(total) + 0.5)
	rank = min(max(rank, 1), total)
	var seen uint64
	for i, v := range c {
		if seen += v; seen >= rank {
			return upper(i)
		}
	}
	return upper(buckets - 1)
}

// Recent keeps a histogram's counts at its last few ticks, so that the
// counts of the last seconds can be read: the clients' latency before a
// change, not since the process started. The zero value keeps none; its
// methods are safe from any goroutine.
type Recent struct {
	// mu guards snaps, oldest first.
	mu    sync.Mutex
	snaps []Counts
}

// recentTicks is how many ticks Recent keeps: ten of a second each.
const recentTicks = 10

// Tick keeps c, the counts now, dropping the oldest beyond ten.
func (r *Recent) Tick(c Counts) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.snaps) == recentTicks {
		r.snaps = append(r.snaps[:0], r.snaps[1:]...)
	}
	r.snaps = append(r.snaps, c)
}

// Reset forgets the counts kept.
func (r *Recent) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.snaps = r.snaps[:0]
}

// Since returns the counts between the oldest kept and now; false when
// none is kept.
func (r *Recent) Since(now Counts) (Counts, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.snaps) == 0 {
		return Counts{}, false
	}
	return now.Sub(r.snaps[0]), true
}
