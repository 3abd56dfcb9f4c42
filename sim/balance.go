package sim

import (
	"fmt"
	"strconv"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/report"
	"github.com/kolco-dev/kolco/sim/stats"
	"github.com/kolco-dev/kolco/sim/theory"
)

// BalanceConfig sets up the balance experiment: for each setup and each
// node count, how evenly the keys spread, averaged over Sets name sets.
// Sweeping the ring's V is done with one setup per V.
type BalanceConfig struct {
	// Setups are the contenders.
	Setups []Setup
	// Nodes are the node counts to measure.
	Nodes []int
	// Keys is the key sample.
	Keys *keys.Set
	// Sets is the number of node name sets to average over.
	Sets int
	// Progress, if not nil, is told of each finished run.
	Progress Progress
}

// BalanceResult is the balance experiment's outcome.
type BalanceResult struct {
	// Keys and Sets echo the configuration.
	Keys int `json:"keys"`
	Sets int `json:"sets"`
	// Rows hold one entry per setup and node count.
	Rows []BalanceStat `json:"rows"`
}

// BalanceStat is one setup at one node count.
type BalanceStat struct {
	// Setup, Algo and VNodes identify the setup (see RemapStat); Nodes
	// is the node count.
	Setup  string `json:"setup"`
	Algo   string `json:"algo"`
	VNodes int    `json:"vnodes,omitempty"`
	Nodes  int    `json:"nodes"`
	// MaxAvg, MinAvg and Spread are the means over the name sets of the
	// largest and smallest key count over the mean, and of the standard
	// deviation over the mean.
	MaxAvg float64 `json:"max_avg"`
	MinAvg float64 `json:"min_avg"`
	Spread float64 `json:"spread"`
	// TheorySpread is the expected measured spread ([theory.Spread]): for a
	// ring the arcs' sqrt((N-1)/(NV+1)) combined with the sampling noise
	// sqrt((N-1)/K) of K keys, for the others the sampling noise alone.
	TheorySpread float64 `json:"theory_spread"`
	// TheoryArcSpread is the ring's sqrt((N-1)/(NV+1)) alone (0 otherwise).
	TheoryArcSpread float64 `json:"theory_arc_spread,omitempty"`
	// TheoryMax is H_N, the expected largest arc over the mean, for a
	// ring with one point per node (0 otherwise).
	TheoryMax float64 `json:"theory_max,omitempty"`
}

// Balance runs the balance experiment.
func Balance(cfg BalanceConfig) (*BalanceResult, error) {
	if len(cfg.Nodes) == 0 || cfg.Sets < 1 {
		return nil, fmt.Errorf("%w: balance needs node counts and sets >= 1", kolco.ErrBadConfig)
	}
	res := &BalanceResult{Keys: cfg.Keys.Len(), Sets: cfg.Sets}
	total, done := len(cfg.Setups)*len(cfg.Nodes)*cfg.Sets, 0
	for _, s := range cfg.Setups {
		for _, n := range cfg.Nodes {
			if n < 1 {
				return nil, fmt.Errorf("%w: node count %d", kolco.ErrBadConfig, n)
			}
			var maxes, mins, spreads []float64
			for set := range cfg.Sets {
				p, err := s.New(nodeNames(setPrefix(set), n))
				if err != nil {
					return nil, s.wrap(err)
				}
				a, err := keys.Assign(p, cfg.Keys)
				if err != nil {
					return nil, s.wrap(err)
				}
				mx, mn, sp := shareStats(a.Counts())
				maxes, mins, spreads = append(maxes, mx), append(mins, mn), append(spreads, sp)
				done++
				cfg.Progress.step(done, total, "balance")
			}
			row := BalanceStat{Setup: s.Label(), Algo: s.Algo, VNodes: ringV(s), Nodes: n,
				MaxAvg: stats.Mean(maxes), MinAvg: stats.Mean(mins), Spread: stats.Mean(spreads),
				TheorySpread: theory.Spread(s.Algo, n, ringV(s), cfg.Keys.Len())}
			if s.Algo == "ring" {
				row.TheoryArcSpread = theory.RingSpread(n, ringV(s))
				if ringV(s) == 1 {
					row.TheoryMax = theory.Harmonic(n)
				}
			}
			res.Rows = append(res.Rows, row)
		}
	}
	return res, nil
}

// Tables renders the result as tables in format f.
func (r *BalanceResult) Tables(f report.Format) []report.Table {
	t := report.Table{
		Title: fmt.Sprintf("balance, %s, %s (theory: ring arcs sqrt((N-1)/(NV+1)) with sampling noise sqrt((N-1)/K); max arc H_N at V=1)",
			report.Count(r.Keys, "key", "keys"), report.Count(r.Sets, "name set", "name sets")),
		Columns: []string{"setup", "nodes", "max/avg", "theory max", "min/avg", "spread", "theory spread", "arc spread"},
	}
	for _, x := range r.Rows {
		tmax, arc := "-", "-"
		if x.TheoryMax > 0 {
			tmax = f.Num(x.TheoryMax, 2)
		}
		if x.TheoryArcSpread > 0 {
			arc = f.Pct(x.TheoryArcSpread, 1)
		}
		t.Add(x.Setup, strconv.Itoa(x.Nodes), f.Num(x.MaxAvg, 2), tmax, f.Num(x.MinAvg, 2), f.Pct(x.Spread, 1), f.Pct(x.TheorySpread, 1), arc)
	}
	return []report.Table{t}
}
