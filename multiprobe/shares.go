package multiprobe

import (
	"math"
	"slices"
)

// Shares returns each node's expected share of uniformly hashed keys, by
// node ID, as the paper's analysis gives it for the node set's points. A
// key goes to the point that most closely follows one of its k probes; a
// probe falls in the arc that ends at a point with that arc's length x, at
// a distance uniform in [0, x). So the point that ends an arc of length x
// (a fraction of the ring) wins a key with probability
//
//	∫₀ˣ k (1 − C(d))^(k−1) dd,  C(d) = Σ min(xⱼ, d) over all arcs,
//
// C(d) being the chance that one probe lands within d of the point ending
// its arc. A node's share is the sum over its points. Arcs longer than
// about 1/(kN) all win about equally; a shorter arc wins about k·x, which
// is why the peak is bounded (near 1 + 1/(k−1) of the mean on average over
// node sets) and the trough is not (see the package documentation).
func (m *Ring) Shares() map[string]float64 {
	s := m.m.Load()
	out := make(map[string]float64, s.set.Len())
	for _, n := range s.set.View() {
		out[n.ID] = 0
	}
	if len(s.points) == 0 {
		return out
	}
	arcs := make([]float64, len(s.points))
	for j, p := range s.points {
		prev := s.points[(j+len(s.points)-1)%len(s.points)]
		arcs[j] = float64(p-prev) / (1 << 64) // the wrap is the unsigned difference
		if len(s.points) == 1 {
			arcs[j] = 1
		}
	}
	win := winChances(arcs, m.probes)
	for j, o := range s.owner {
		out[s.set.At(int(o)).ID] += win[j]
	}
	return out
}

// winChances returns, for each arc, the integral of Shares. On the
// stretch of d between two consecutive arc lengths, C(d) = a + r·d, with a
// the total of the shorter arcs and r the number of the others, so each
// stretch integrates in closed form: ((1−a−r·lo)^k − (1−a−r·hi)^k) / r.
func winChances(arcs []float64, k int) []float64 {
	order := make([]int, len(arcs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int {
		switch {
		case arcs[i] < arcs[j]:
			return -1
		case arcs[i] > arcs[j]:
			return 1
		}
		return i - j
	})
	win := make([]float64, len(arcs))
	below, acc, lo := 0.0, 0.0, 0.0 // total of shorter arcs, integral up to lo
	for n, i := range order {
		hi, r := arcs[i], float64(len(arcs)-n)
		acc += (math.Pow(1-below-r*lo, float64(k)) - math.Pow(1-below-r*hi, float64(k))) / r
		win[i] = acc
		below += hi
		lo = hi
	}
	return win
}
