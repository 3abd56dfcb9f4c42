package parallel

import (
	"strconv"
	"sync/atomic"
	"testing"
)

// TestChunksCoverOnce: the ranges are contiguous, in order, and cover
// [0, n) exactly once, for sizes around the single-goroutine cut-off.
func TestChunksCoverOnce(t *testing.T) {
	for _, n := range []int{0, 1, 7, minChunked - 1, minChunked, minChunked + 1, 1_000_003} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			next := 0
			for _, r := range Chunks(n) {
				if r[0] != next || r[1] < r[0] {
					t.Fatalf("range %v after %d", r, next)
				}
				next = r[1]
			}
			if next != n {
				t.Errorf("ranges end at %d, want %d", next, n)
			}
		})
	}
}

func TestForVisitsEveryIndex(t *testing.T) {
	const n = 100_000
	seen := make([]atomic.Int32, n)
	For(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			seen[i].Add(1)
		}
	})
	for i := range seen {
		if c := seen[i].Load(); c != 1 {
			t.Fatalf("index %d visited %d times", i, c)
		}
	}
}
