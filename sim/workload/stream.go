package workload

import (
	"math"
	"math/rand/v2"
	"sort"
)

// ZipfWeights returns the Zipf probabilities of n ranks with exponent s:
// rank i (from 0) gets (i+1)^-s over the sum.
func ZipfWeights(n int, s float64) []float64 {
	w := make([]float64, n)
	sum := 0.0
	for i := range w {
		w[i] = math.Pow(float64(i+1), -s)
		sum += w[i]
	}
	for i := range w {
		w[i] /= sum
	}
	return w
}

// Stream draws n requests, each the rank of the key it asks for, rank i
// drawn with probability probs[i] (such as [ZipfWeights]). The draw is
// seeded: the same probabilities, n and seed give the same stream. Without
// probabilities there is nothing to ask for, and the stream is empty.
func Stream(probs []float64, n int, seed uint64) []int32 {
	if len(probs) == 0 {
		return nil
	}
	cum := make([]float64, len(probs))
	sum := 0.0
	for i, p := range probs {
		sum += p
		cum[i] = sum
	}
	rng := rand.New(rand.NewPCG(seed, 0x686f74))
	out := make([]int32, n)
	for i := range out {
		u := rng.Float64() * sum
		out[i] = int32(min(sort.SearchFloat64s(cum, u), len(cum)-1))
	}
	return out
}
