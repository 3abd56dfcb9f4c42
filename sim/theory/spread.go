package theory

import "math"

// RingSpread returns the expected spread (standard deviation over mean)
// of the arcs of n nodes with v points each on a ring:
// sqrt((n-1)/(n*v+1)). A node's share of the circle is the sum of v of
// the n*v spacings of uniform points, a Beta(v, (n-1)v) variable.
func RingSpread(n, v int) float64 {
	return math.Sqrt(float64(n-1) / float64(n*v+1))
}

// SamplingSpread returns the spread that counting k uniformly placed keys
// on n equal nodes shows by itself: sqrt((n-1)/k), the multinomial noise of
// the counts.
func SamplingSpread(n, k int) float64 {
	return math.Sqrt(float64(n-1) / float64(k))
}

// Spread returns the expected spread of key counts measured with k keys
// for the algorithm of package algo named name: the ring's arc spread and
// the sampling noise combined for a ring with v points per node, the
// sampling noise alone for the others.
func Spread(name string, n, v, k int) float64 {
	s := SamplingSpread(n, k)
	if name == "ring" {
		r := RingSpread(n, v)
		return math.Sqrt(r*r + s*s)
	}
	return s
}

// Harmonic returns H_n = 1 + 1/2 + ... + 1/n: the expected largest arc of
// n nodes with one point each, over the mean arc.
func Harmonic(n int) float64 {
	h := 0.0
	for i := n; i >= 1; i-- {
		h += 1 / float64(i)
	}
	return h
}
