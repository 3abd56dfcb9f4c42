package mover

import (
	"sync"
	"time"
)

// sizer chooses the batch from what the MIGRATEs took, and estimates the
// keys' bytes from the sample whose sizes were asked.
type sizer struct {
	cfg Config
	// mu guards the figures below.
	mu sync.Mutex
	// perKey is the time a MIGRATE holds its source per key, a moving
	// average; 0 before the first.
	perKey time.Duration
	// sizeSum and sizeN are the bytes and number of the keys sampled.
	sizeSum, sizeN int64
}

func newSizer(cfg Config) *sizer { return &sizer{cfg: cfg} }

// batch returns how many keys the next MIGRATE takes: about Slice's
// worth at the time per key measured; before any is measured, a small
// batch, whose time the next batches learn from.
func (s *sizer) batch() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perKey <= 0 {
		return min(max(s.cfg.MinBatch, 32), s.cfg.MaxBatch)
	}
	return min(max(int(s.cfg.Slice/s.perKey), s.cfg.MinBatch), s.cfg.MaxBatch)
}

// observe learns from a MIGRATE of n keys that took took while inflight
// MIGRATEs, itself included, ran from the source: they took turns on its
// one core, so its own share is took/inflight.
func (s *sizer) observe(n int, took time.Duration, inflight int64) {
	if n <= 0 {
		return
	}
	per := took / time.Duration(int64(n)*max(inflight, 1))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perKey <= 0 {
		s.perKey = per
		return
	}
	s.perKey = (3*s.perKey + per) / 4
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
