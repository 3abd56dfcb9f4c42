package mover

import (
	"slices"
	"sync"
	"time"
)

// sizer chooses the batch from what the MIGRATEs took, and estimates the
// keys' bytes from the sample whose sizes were asked.
//
// A MIGRATE's time is a part that does not depend on its keys - the
// round trips to the mover and to the target, and on a busy machine the
// wait for a core at each end - and a part per key: serializing it on
// the source and restoring it on the target. Only the second grows with
// the batch; a smaller batch pays the first more often, in total, and
// holds the source as long for it each time. So the batch is sized from
// the cost of one more key - the slope of the time against the keys, over
// the last MIGRATEs - so that the keys' own part is about [Config.Slice].
// The time taken for the slope itself (its average per key) would count
// the round trips in: on the 2-core test machine at a load of 15 a
// MIGRATE of 8 keys took about 2.5 ms, which a sizer by the average read
// as 300 µs a key, and it kept every batch at the least (8 keys) while
// the servers restored a key in 3-5 µs. The slope is the median of the
// slopes between pairs of MIGRATEs (Theil, 1950; Sen, "Estimates of the
// regression coefficient based on Kendall's tau", 1968): a wait for a
// core lengthens a few MIGRATEs, and moves a median little where it
// moves a least-squares line a lot. Batches alternate between two
// thirds and four thirds of the size chosen, so that there are sizes
// apart to take slopes between.
type sizer struct {
	cfg Config
	// mu guards the figures below.
	mu sync.Mutex
	// obs are the last MIGRATEs' keys and times (their share of the
	// source: see observe), at most fitted of them, the oldest at next
	// once there are that many.
	obs  []point
	next int
	// target is the batch chosen; low says whether the next batch is
	// the smaller of the two it alternates between.
	target int
	low    bool
	// sizeSum and sizeN are the bytes and number of the keys sampled.
	sizeSum, sizeN int64
}

// point is a MIGRATE of n keys that held its source for t.
type point struct {
	n int
	t time.Duration
}

// fitted is how many MIGRATEs the slope is taken over: enough that a few
// slow ones do not decide the median, few enough that it follows a change
// of the servers' pace within a fraction of a second.
const fitted = 24

func newSizer(cfg Config) *sizer {
	return &sizer{cfg: cfg, target: min(max(cfg.MinBatch, 32), cfg.MaxBatch)}
}

// size returns the batch chosen, for a SCAN's COUNT.
func (s *sizer) size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.target
}

// batch returns how many keys the next batch takes: the size chosen,
// alternately two thirds and four thirds of it, within the bounds.
func (s *sizer) batch() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.low = !s.low
	n := s.target * 4 / 3
	if s.low {
		n = s.target * 2 / 3
	}
	return min(max(n, s.cfg.MinBatch), s.cfg.MaxBatch)
}

// observe learns from a MIGRATE of n keys that took took while inflight
// MIGRATEs, itself included, ran from the source: they took turns on its
// one core, so its own share is took/inflight.
func (s *sizer) observe(n int, took time.Duration, inflight int64) {
	if n <= 0 {
		return
	}
	p := point{n, took / time.Duration(max(inflight, 1))}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.obs) < fitted {
		s.obs = append(s.obs, p)
	} else {
		s.obs[s.next] = p
		s.next = (s.next + 1) % fitted
	}
	if len(s.obs) < fitted/3 {
		return
	}
	slope, ok := medianSlope(s.obs)
	if !ok {
		return
	}
	// A slope of nothing or less is a pace the noise hides: the keys
	// cost less than the waits, and the batch may grow.
	want := s.cfg.MaxBatch
	if slope > 0 {
		want = int(float64(s.cfg.Slice) / slope)
	}
	// At most twice the last a step, so that one odd fit does not send
	// a batch that holds the source for long.
	s.target = min(max(want, s.cfg.MinBatch), 2*s.target, s.cfg.MaxBatch)
}

// medianSlope returns the median of the slopes, in nanoseconds a key,
// between the pairs of obs of different sizes; false when there are none.
func medianSlope(obs []point) (float64, bool) {
	slopes := make([]float64, 0, len(obs)*(len(obs)-1)/2)
	for i, a := range obs {
		for _, b := range obs[i+1:] {
			if a.n != b.n {
				slopes = append(slopes, float64(b.t-a.t)/float64(b.n-a.n))
			}
		}
	}
	if len(slopes) == 0 {
		return 0, false
	}
	slices.Sort(slopes)
	return slopes[len(slopes)/2], true
}

// sized counts a sampled key of size bytes.
func (s *sizer) sized(bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sizeSum += bytes
	s.sizeN++
}

// bytes estimates the size of n keys from the sample, 0 before any.
func (s *sizer) bytes(n int) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sizeN == 0 {
		return 0
	}
	return int64(n) * s.sizeSum / s.sizeN
}
