// Package stats computes the statistics the simulator reports as Python's
// statistics module computes them - exactly, rounded once - so that the
// article's figures, measured with Python, reproduce to the last digit.
package stats

import (
	"math"
	"math/big"
)

// Mean returns the arithmetic mean of xs, computed exactly and rounded once,
// as Python's statistics.mean does, so that published figures reproduce to
// the last digit. It returns NaN for no values.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sum := new(big.Rat)
	var r big.Rat
	for _, x := range xs {
		sum.Add(sum, r.SetFloat64(x))
	}
	f, _ := sum.Quo(sum, new(big.Rat).SetInt64(int64(len(xs)))).Float64()
	return f
}

// PStdev returns the population standard deviation of counts: the exact
// variance rounded once to a float64, then its square root, as Python's
// statistics.pstdev does for integers. It returns NaN for no values.
func PStdev(counts []int) float64 {
	if len(counts) == 0 {
		return math.NaN()
	}
	// variance = (n·Σx² − (Σx)²) / n², exact in big integers.
	var sum, sq big.Int
	var x big.Int
	for _, c := range counts {
		x.SetInt64(int64(c))
		sum.Add(&sum, &x)
		sq.Add(&sq, x.Mul(&x, &x))
	}
	n := big.NewInt(int64(len(counts)))
	num := new(big.Int).Mul(n, &sq)
	num.Sub(num, new(big.Int).Mul(&sum, &sum))
	v, _ := new(big.Rat).SetFrac(num, new(big.Int).Mul(n, n)).Float64()
	return math.Sqrt(v)
}
