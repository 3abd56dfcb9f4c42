package sim

import (
	"errors"
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/report"
)

// WeightsConfig sets up the weights experiment: the share of keys each
// weighted node obtains against the share its weight requests.
type WeightsConfig struct {
	// Setups are the contenders.
	Setups []Setup
	// Nodes are the weighted nodes.
	Nodes []kolco.Node
	// Keys is the key sample.
	Keys *keys.Set
}

// WeightsResult is the weights experiment's outcome.
type WeightsResult struct {
	// Keys is the sample size.
	Keys int `json:"keys"`
	// Rows hold one entry per node of each setup.
	Rows []WeightStat `json:"rows"`
	// Skipped are the labels of the setups left out because their
	// algorithm takes no weights (every node weighs 1), in the order
	// given.
	Skipped []string `json:"skipped,omitempty"`
}

// WeightStat is one node of one setup.
type WeightStat struct {
	// Setup is the setup's label; Node and Weight the node's.
	Setup  string  `json:"setup"`
	Node   string  `json:"node"`
	Weight float64 `json:"weight"`
	// Requested is weight / total weight; Obtained the measured share.
	Requested float64 `json:"requested"`
	Obtained  float64 `json:"obtained"`
}

// Weights runs the weights experiment on every setup whose algorithm
// takes weights, and lists the others in Skipped. The error wraps
// kolco.ErrNoNodes without nodes, kolco.ErrBadWeight for a node whose
// weight no algorithm could take (negative, NaN or infinite) or when no
// setup takes weights, or is a setup's error.
func Weights(cfg WeightsConfig) (*WeightsResult, error) {
	if len(cfg.Nodes) == 0 {
		return nil, kolco.ErrNoNodes
	}
	for _, n := range cfg.Nodes {
		if err := n.Validate(); err != nil {
			return nil, err
		}
	}
	res := &WeightsResult{Keys: cfg.Keys.Len()}
	for _, s := range cfg.Setups {
		p, err := s.New(cfg.Nodes)
		if errors.Is(err, kolco.ErrBadWeight) { // the nodes are valid: the algorithm takes no weights
			res.Skipped = append(res.Skipped, s.Label())
			continue
		}
		if err != nil {
			return nil, s.wrap(err)
		}
		a, err := keys.Assign(p, cfg.Keys)
		if err != nil {
			return nil, err
		}
		total := 0.0
		for _, n := range a.Nodes {
			total += n.EffectiveWeight()
		}
		counts := a.Counts()
		for i, n := range a.Nodes {
			res.Rows = append(res.Rows, WeightStat{Setup: s.Label(), Node: n.ID, Weight: n.EffectiveWeight(),
				Requested: n.EffectiveWeight() / total, Obtained: float64(counts[i]) / float64(cfg.Keys.Len())})
		}
	}
	if len(res.Skipped) == len(cfg.Setups) && len(cfg.Setups) > 0 {
		return nil, fmt.Errorf("%w: no setup takes weights (%v)", kolco.ErrBadWeight, res.Skipped)
	}
	return res, nil
}

// Tables renders the result as tables in format f.
func (r *WeightsResult) Tables(f report.Format) []report.Table {
	t := report.Table{
		Title:   fmt.Sprintf("weights: requested vs obtained share, %s", report.Count(r.Keys, "key", "keys")),
		Columns: []string{"setup", "node", "weight", "requested", "obtained", "obtained/requested"},
	}
	for _, x := range r.Rows {
		t.Add(x.Setup, x.Node, f.Num(x.Weight, 2), f.Pct(x.Requested, 2), f.Pct(x.Obtained, 2), f.Num(x.Obtained/x.Requested, 3))
	}
	return []report.Table{t}
}
