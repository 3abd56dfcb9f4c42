package theory

import "math"

// RandomFullZones returns the probability that r distinct nodes drawn
// uniformly at random from zones of the given sizes span min(r, zones)
// zones: r! e_r(sizes) / (n)_r when r <= zones (e_r the elementary
// symmetric polynomial: one node from each of r zones), and by
// inclusion-exclusion over the zones left out when r > zones. It returns
// NaN for more than 20 zones with r > zones, or r > n.
func RandomFullZones(sizes []int, r int) float64 {
	n := 0
	for _, s := range sizes {
		n += s
	}
	z := len(sizes)
	if r < 1 || r > n || z == 0 {
		return math.NaN()
	}
	if r <= z {
		e := make([]float64, r+1) // e[j] = e_j of the sizes seen so far
		e[0] = 1
		for _, s := range sizes {
			for j := r; j >= 1; j-- {
				e[j] += e[j-1] * float64(s)
			}
		}
		p := e[r]
		for i := range r {
			p *= float64(i+1) / float64(n-i)
		}
		return p
	}
	if z > 20 {
		return math.NaN()
	}
	total := 0.0
	for mask := range 1 << z {
		m, out := 0, 0
		for i, s := range sizes {
			if mask&(1<<i) != 0 {
				m += s
			} else {
				out++
			}
		}
		term := binom(m, r) / binom(n, r)
		if out%2 == 1 {
			term = -term
		}
		total += term
	}
	return total
}

// binom returns n choose k as a float64.
func binom(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	b := 1.0
	for i := range k {
		b = b * float64(n-i) / float64(i+1)
	}
	return b
}
