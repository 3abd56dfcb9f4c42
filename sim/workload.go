package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// ErrBadDist is returned for a distribution spec that cannot be parsed.
var ErrBadDist = errors.New("sim: bad distribution")

// Dist names a distribution of key sizes or request rates over n keys:
//
//	const         every key the same
//	exp           exponential (sizes)
//	pareto:A      Pareto with shape A > 1 (heavy-tailed sizes)
//	zipf:S        rank i (from 1) gets 1/i^S; keys are shuffled into ranks
//	uniform       a synonym of const
//
// Values are scaled to the requested mean. The draw is seeded, so the same
// spec gives the same values.
type Dist string

// Values returns n values of the distribution with the given mean.
func (d Dist) Values(n int, mean float64, seed uint64) ([]float64, error) {
	name, arg, _ := strings.Cut(string(d), ":")
	rng := rand.New(rand.NewPCG(seed, 0x6b6f6c636f))
	out := make([]float64, n)
	param := func(def float64, ok func(float64) bool) (float64, error) {
		if arg == "" {
			return def, nil
		}
		v, err := strconv.ParseFloat(arg, 64)
		if err != nil || !ok(v) {
			return 0, fmt.Errorf("%w: %q", ErrBadDist, string(d))
		}
		return v, nil
	}
	switch name {
	case "", "const", "uniform":
		for i := range out {
			out[i] = 1
		}
	case "exp":
		for i := range out {
			out[i] = rng.ExpFloat64()
		}
	case "pareto":
		a, err := param(1.5, func(v float64) bool { return v > 1 && !math.IsInf(v, 0) })
		if err != nil {
			return nil, err
		}
		for i := range out {
			out[i] = math.Pow(1-rng.Float64(), -1/a)
		}
	case "zipf":
		s, err := param(1, func(v float64) bool { return v >= 0 && v < 100 })
		if err != nil {
			return nil, err
		}
		perm := rng.Perm(n)
		for i, k := range perm {
			out[k] = math.Pow(float64(i+1), -s)
		}
	default:
		return nil, fmt.Errorf("%w: %q (want const, exp, pareto:A or zipf:S)", ErrBadDist, string(d))
	}
	sum := 0.0
	for _, v := range out {
		sum += v
	}
	if n > 0 && sum > 0 {
		scale := mean * float64(n) / sum
		for i := range out {
			out[i] *= scale
		}
	}
	return out, nil
}

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
