package sim_test

import (
	"math"
	"testing"

	"github.com/kolco-dev/kolco/sim"
)

// The expected values were computed with Python's statistics module as
// Python 3.9, the article's version, computes pstdev: math.sqrt of the
// exactly computed variance rounded to a float (3.11 rounds the square root
// of the exact fraction instead, which can differ in the last bit).
func TestMeanAndPStdevMatchPython(t *testing.T) {
	if got := sim.Mean([]float64{0.1, 0.2, 0.3}); got != 0.2 {
		t.Errorf("Mean(0.1, 0.2, 0.3) = %v, Python says 0.2", got) // a naive sum gives 0.20000000000000004
	}
	if got := sim.PStdev([]int{1, 2, 3, 4, 100000, 7}); got != 37266.532567215494 {
		t.Errorf("PStdev = %v, Python says 37266.532567215494", got)
	}
	if got := sim.PStdev([]int{5, 5, 5}); got != 0 {
		t.Errorf("PStdev of equal values = %v, want 0", got)
	}
	if !math.IsNaN(sim.Mean(nil)) || !math.IsNaN(sim.PStdev(nil)) {
		t.Error("Mean and PStdev of nothing should be NaN")
	}
}

func TestDatabaseLoad(t *testing.T) {
	// Nothing cold: the steady miss rate. Everything cold: every request.
	if got := sim.DatabaseLoad(1000, 0.9, 0); math.Abs(got-100) > 1e-9 {
		t.Errorf("no cold keys: %v, want 100", got)
	}
	if got := sim.DatabaseLoad(1000, 0.9, 1); got != 1000 {
		t.Errorf("all keys cold: %v, want 1000", got)
	}
}
