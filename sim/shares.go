package sim

import (
	"math"
	"slices"
	"strconv"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/sim/stats"
)

func itoa(i int) string { return strconv.Itoa(i) }

// nodeNames returns n nodes named prefix-0 ... prefix-(n-1).
func nodeNames(prefix string, n int) []kolco.Node {
	nodes := make([]kolco.Node, n)
	for i := range nodes {
		nodes[i] = kolco.Node{ID: prefix + "-" + strconv.Itoa(i)}
	}
	return nodes
}

// setPrefix is the node name prefix of name set s: "node" for the first,
// "set<s>-node" for the others, so that each set places the points of its
// nodes elsewhere.
func setPrefix(s int) string {
	if s == 0 {
		return "node"
	}
	return "set" + strconv.Itoa(s) + "-node"
}

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

// step reports progress to p, if p is not nil.
func (p Progress) step(done, total int, name string) {
	if p != nil {
		p(done, total, name)
	}
}
