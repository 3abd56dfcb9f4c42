package mover

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestSizerSizesByTheCostOfAKey: a MIGRATE takes a part that does not
// depend on its keys (round trips, waits for a core) and a part a key;
// the sizer chooses the batch whose keys' part is about the slice, at
// whatever the other part is, and with one MIGRATE in ten held up for
// milliseconds by the machine. A sizer by the average time a key kept
// every batch at the least when the fixed part was larger than the
// slice.
func TestSizerSizesByTheCostOfAKey(t *testing.T) {
	const slice, perKey = time.Millisecond, 4 * time.Microsecond
	want := int(slice / perKey) // 250
	for _, fixed := range []time.Duration{0, 200 * time.Microsecond, 2500 * time.Microsecond, 10 * time.Millisecond} {
		t.Run(fmt.Sprintf("fixed=%v", fixed), func(t *testing.T) {
			s := newSizer(Config{Slice: slice}.withDefaults())
			rng := rand.New(rand.NewPCG(1, 2))
			for range 300 {
				n := s.batch()
				took := fixed + time.Duration(n)*perKey
				if rng.IntN(10) == 0 {
					took += time.Duration(rng.IntN(20)) * time.Millisecond
				}
				s.observe(n, took, 1)
			}
			lo, hi := want*2/3*3/4, want*4/3*5/4
			for range 4 {
				if n := s.batch(); n < lo || n > hi {
					t.Errorf("batch %d, want %d to %d (about %d, give or take a third)", n, lo, hi, want)
				}
			}
		})
	}
}

// TestSizerGrowsWhenKeysCostNothingVisible: when the time does not grow
// with the keys (the noise hides their cost), the batch doubles up to
// the most, one step at a time.
func TestSizerGrowsWhenKeysCostNothingVisible(t *testing.T) {
	s := newSizer(Config{MaxBatch: 1000}.withDefaults())
	last := s.size()
	for range 100 {
		n := s.batch()
		s.observe(n, time.Millisecond, 1)
		if got := s.size(); got > 2*last {
			t.Fatalf("size %d after %d: more than doubled", got, last)
		}
		last = s.size()
	}
	if last != 1000 {
		t.Errorf("size %d, want the most, 1000", last)
	}
}
