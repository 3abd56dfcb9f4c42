package sim

import "math"

// The closed forms that the experiments print beside their measurements.

// TheoryMovedAdd returns the share of keys a minimally disruptive placement
// moves when k nodes join n equal ones: k/(n+k), the new nodes' fair share.
func TheoryMovedAdd(n, k int) float64 { return float64(k) / float64(n+k) }

// TheoryMovedRemove returns the share of keys a minimally disruptive
// placement moves when k of n equal nodes leave: k/n, their keys.
func TheoryMovedRemove(n, k int) float64 { return float64(k) / float64(n) }

// TheoryModuloMoved returns the share of uniformly hashed keys that hash % n
// moves when n becomes m: 1 - min(n,m)/lcm(n,m), since h % n = h % m
// exactly for the residues below min(n, m) of each period lcm(n, m).
// For m = n+1 it is n/(n+1).
func TheoryModuloMoved(n, m int) float64 {
	if n <= 0 || m <= 0 {
		return math.NaN()
	}
	l := n / gcd(n, m) * m
	return 1 - float64(min(n, m))/float64(l)
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// TheoryMoved returns the expected moved share of a change from n to m
// nodes for algorithm name: modulo's lcm formula, or the minimal share for
// the consistent algorithms.
func TheoryMoved(name string, n, m int) float64 {
	switch {
	case name == "modulo":
		return TheoryModuloMoved(n, m)
	case m >= n:
		return TheoryMovedAdd(n, m-n)
	default:
		return TheoryMovedRemove(n, n-m)
	}
}

// TheoryRingSpread returns the expected spread (standard deviation over
// mean) of the arcs of n nodes with v points each on a ring:
// sqrt((n-1)/(n*v+1)). A node's share of the circle is the sum of v of
// the n*v spacings of uniform points, a Beta(v, (n-1)v) variable.
func TheoryRingSpread(n, v int) float64 {
	return math.Sqrt(float64(n-1) / float64(n*v+1))
}

// TheorySamplingSpread returns the spread that counting k uniformly placed
// keys on n equal nodes shows by itself: sqrt((n-1)/k), the multinomial
// noise of the counts.
func TheorySamplingSpread(n, k int) float64 {
	return math.Sqrt(float64(n-1) / float64(k))
}

// TheorySpread returns the expected spread of key counts measured with k
// keys: the ring's arc spread and the sampling noise combined for a ring
// with v points per node, the sampling noise alone for the others.
func TheorySpread(name string, n, v, k int) float64 {
	s := TheorySamplingSpread(n, k)
	if name == "ring" {
		r := TheoryRingSpread(n, v)
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
