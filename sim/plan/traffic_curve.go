package plan

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/mrc"
)

// PoolCurve is a pool's miss ratio against its nodes' memory, before and
// after a change: each node's curve from the requests of the keys it holds
// (package mrc), weighed by its reads.
type PoolCurve struct {
	// Policy is the nodes' eviction.
	Policy string `json:"policy"`
	// Factors scale every node's memory; Memory is the nodes' mean memory
	// at each factor, in bytes.
	Factors []float64 `json:"factors"`
	Memory  []float64 `json:"memory_bytes"`
	// Before and After are the pool's miss ratio at each factor.
	Before []float64 `json:"miss_ratio_before"`
	After  []float64 `json:"miss_ratio_after"`
}

// curveFactors are the memory multiples a pool's curve is drawn at; 1 is
// the nodes' own memory.
var curveFactors = []float64{0.125, 0.25, 0.5, 1, 2, 4, 8}

// missRatios sets the steady miss ratios before and after, and with memory
// given the nodes' curves.
func (ti *TrafficImpact) missRatios(cfg Config, before, after keys.Assignment) error {
	t, p := cfg.Traffic, cfg.Traffic.Profile
	ti.MissRatio, ti.MissFrom = 1-cfg.HitRate, "hit-rate"
	if p.Results() {
		ti.MissRatio, ti.MissFrom = float64(p.Misses)/float64(p.Hits+p.Misses), "trace"
	}
	ti.MissRatioAfter = ti.MissRatio
	if t.Memory != nil {
		c, err := ti.curve(t, before, after)
		if err != nil {
			return err
		}
		ti.Curve = c
		one := slices.Index(curveFactors, 1)
		if !p.Results() {
			ti.MissRatio, ti.MissFrom = c.Before[one], "curve"
		}
		ti.MissRatioAfter = math.Min(1, math.Max(0, ti.MissRatio+c.After[one]-c.Before[one]))
	}
	ti.DBRPS = ti.ReadRPS * ti.MissRatio
	ti.DBRPSRightAfter = ti.MovedReadRPS + (ti.ReadRPS-ti.MovedReadRPS)*ti.MissRatio
	ti.DBRPSAfter = ti.ReadRPS * ti.MissRatioAfter
	return nil
}

// curve draws each node's miss-ratio curve before and after, sets each
// node's miss ratio at its memory, and returns the pool's.
func (ti *TrafficImpact) curve(t *Traffic, before, after keys.Assignment) (*PoolCurve, error) {
	fp := t.footprint()
	c := &PoolCurve{Policy: t.Policy.String(), Factors: curveFactors}
	c.Before, c.After = make([]float64, len(curveFactors)), make([]float64, len(curveFactors))
	c.Memory = make([]float64, len(curveFactors))
	index := map[string]int{}
	for i, n := range ti.Nodes {
		index[n.Node] = i
	}
	for side, a := range []keys.Assignment{before, after} {
		weights, sums := 0.0, make([]float64, len(curveFactors))
		for j, n := range a.Nodes {
			mem, ok := t.Memory[n.ID]
			if !ok {
				if mem, ok = t.Memory[""]; !ok {
					return nil, fmt.Errorf("%w: no memory given for node %q", kolco.ErrBadConfig, n.ID)
				}
			}
			sizes := make([]float64, len(curveFactors))
			for f, x := range curveFactors {
				sizes[f] = mem * x
				if side == 0 {
					c.Memory[f] += mem * x / float64(len(a.Nodes))
				}
			}
			owner := a.Owner
			s := mrc.FromProfile(t.Profile, fp, func(k int32) bool { return int(owner[k]) == j })
			mr, err := mrc.Curve(s, t.Policy, sizes)
			if err != nil {
				return nil, err
			}
			nt := &ti.Nodes[index[n.ID]]
			nt.Memory = mem
			at := jsonFloat(mr[slices.Index(curveFactors, 1)])
			if side == 0 {
				nt.MissBefore = &at
			} else {
				nt.MissAfter = &at
			}
			if s.Gets == 0 {
				continue
			}
			weights += s.Gets
			for f := range sizes {
				sums[f] += mr[f] * s.Gets
			}
		}
		out := c.Before
		if side == 1 {
			out = c.After
		}
		for f := range out {
			out[f] = sums[f] / weights
		}
	}
	return c, nil
}

// footprint returns the traffic's item footprint: the one given, else
// memcached's for its policies and a plain one for LRU.
func (t *Traffic) footprint() mrc.Footprint {
	if t.Footprint != nil {
		return t.Footprint
	}
	if t.Policy == mrc.LRU {
		return mrc.PlainFootprint
	}
	return mrc.MemcachedFootprint
}

// jsonFloat is a float that JSON writes as null when it is NaN.
type jsonFloat float64

// MarshalJSON writes the number, or null for NaN.
func (f jsonFloat) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}
