package stats_test

import (
	"fmt"

	"github.com/kolco-dev/kolco/sim/stats"
)

// A sum in floating point rounds at every step; Mean rounds once, as
// Python's statistics.mean does, so published figures reproduce exactly.
func ExampleMean() {
	xs := []float64{0.1, 0.2, 0.3}
	naive := (xs[0] + xs[1] + xs[2]) / 3
	fmt.Println(naive, stats.Mean(xs))
	fmt.Println(stats.PStdev([]int{90, 110, 100, 100}))
	// Output:
	// 0.20000000000000004 0.2
	// 7.0710678118654755
}
