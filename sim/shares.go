package sim

import (
	"math"
	"slices"

	"github.com/kolco-dev/kolco/sim/stats"
)

// shareStats returns max/avg, min/avg and spread (population standard
// deviation over the mean) of per-node counts.
func shareStats(counts []int) (maxAvg, minAvg, spread float64) {
	if len(counts) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	avg := float64(total) / float64(len(counts))
	return float64(slices.Max(counts)) / avg, float64(slices.Min(counts)) / avg, stats.PStdev(counts) / avg
}

// minAvgMax returns the minimum, mean and maximum of xs.
func minAvgMax(xs []float64) (lo, avg, hi float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	return slices.Min(xs), stats.Mean(xs), slices.Max(xs)
}
