// Package workload describes how big keys are and how often they are
// requested: distributions of key sizes and request rates, parsed once
// from a spec such as "pareto:1.5" or "zipf:1.1", and streams of requests
// drawn from a popularity law such as Zipf's.
package workload

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// ErrBadDist is returned by [ParseDist] for a spec it cannot read.
var ErrBadDist = errors.New("workload: bad distribution")

// kind is a family of distributions.
type kind int

const (
	constant kind = iota
	exponential
	pareto
	zipf
)

// Dist is a distribution of key sizes or request rates over n keys, parsed
// once by [ParseDist] and then drawn from any number of times. The zero
// Dist is "const".
type Dist struct {
	kind  kind
	param float64
}

// ParseDist reads a distribution spec:
//
//	const         every key the same
//	uniform       a synonym of const
//	exp           exponential (sizes)
//	pareto:A      Pareto with shape A > 1 (heavy-tailed sizes); A = 1.5 if omitted
//	zipf:S        rank i (from 1) gets 1/i^S, 0 <= S < 100; keys are shuffled
//	              into ranks; S = 1 if omitted
//
// The empty spec is const; const, uniform and exp ignore an argument. The
// error wraps [ErrBadDist].
func ParseDist(spec string) (Dist, error) {
	name, arg, _ := strings.Cut(spec, ":")
	param := func(def float64, ok func(float64) bool) (float64, error) {
		if arg == "" {
			return def, nil
		}
		v, err := strconv.ParseFloat(arg, 64)
		if err != nil || !ok(v) {
			return 0, fmt.Errorf("%w: %q", ErrBadDist, spec)
		}
		return v, nil
	}
	switch name {
	case "", "const", "uniform":
		return Dist{kind: constant}, nil
	case "exp":
		return Dist{kind: exponential}, nil
	case "pareto":
		a, err := param(1.5, func(v float64) bool { return v > 1 && !math.IsInf(v, 0) })
		return Dist{kind: pareto, param: a}, err
	case "zipf":
		s, err := param(1, func(v float64) bool { return v >= 0 && v < 100 })
		return Dist{kind: zipf, param: s}, err
	}
	return Dist{}, fmt.Errorf("%w: %q (want const, exp, pareto:A or zipf:S)", ErrBadDist, spec)
}

// String returns the distribution's spec, with its parameter.
func (d Dist) String() string {
	switch d.kind {
	case exponential:
		return "exp"
	case pareto:
		return "pareto:" + strconv.FormatFloat(d.param, 'g', -1, 64)
	case zipf:
		return "zipf:" + strconv.FormatFloat(d.param, 'g', -1, 64)
	}
	return "const"
}

// Values returns n values of the distribution scaled to the given mean.
// The draw is seeded: the same distribution, n and seed give the same
// values.
func (d Dist) Values(n int, mean float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0x6b6f6c636f))
	out := make([]float64, n)
	switch d.kind {
	case constant:
		for i := range out {
			out[i] = 1
		}
	case exponential:
		for i := range out {
			out[i] = rng.ExpFloat64()
		}
	case pareto:
		for i := range out {
			out[i] = math.Pow(1-rng.Float64(), -1/d.param)
		}
	case zipf:
		perm := rng.Perm(n)
		for i, k := range perm {
			out[k] = math.Pow(float64(i+1), -d.param)
		}
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
	return out
}
