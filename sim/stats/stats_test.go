package stats_test

import (
	"math"
	"testing"

	"github.com/kolco-dev/kolco/sim/stats"
)

// The expected values were computed with Python's statistics module as
// Python 3.9, the article's version, computes pstdev: math.sqrt of the
// exactly computed variance rounded to a float (3.11 rounds the square root
// of the exact fraction instead, which can differ in the last bit).
func TestMeanAndPStdevMatchPython(t *testing.T) {
	if got := stats.Mean([]float64{0.1, 0.2, 0.3}); got != 0.2 {
		t.Errorf("Mean(0.1, 0.2, 0.3) = %v, Python says 0.2", got) // a naive sum gives 0.20000000000000004
	}
	if got := stats.PStdev([]int{1, 2, 3, 4, 100000, 7}); got != 37266.532567215494 {
		t.Errorf("PStdev = %v, Python says 37266.532567215494", got)
	}
	if got := stats.PStdev([]int{5, 5, 5}); got != 0 {
		t.Errorf("PStdev of equal values = %v, want 0", got)
	}
	if !math.IsNaN(stats.Mean(nil)) || !math.IsNaN(stats.PStdev(nil)) {
		t.Error("Mean and PStdev of nothing should be NaN")
	}
}
