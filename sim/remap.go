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

// RemapConfig sets up the remap experiment: Nodes equal nodes, then Add
// nodes join or Remove of them (the last by name) leave, repeated over Sets
// node name sets.
type RemapConfig struct {
	// Setups are the contenders.
	Setups []Setup
	// Nodes is the node count before the change.
	Nodes int
	// Add and Remove are how many nodes join or leave.
	Add, Remove int
	// Keys is the key sample.
	Keys *keys.Set
	// Sets is the number of node name sets to repeat the change over.
	Sets int
	// Progress, if not nil, is told of each finished run.
	Progress Progress
}

// RemapResult is the remap experiment's outcome, one row per setup.
type RemapResult struct {
	// Nodes, Add, Remove, Keys and Sets echo the configuration.
	Nodes  int `json:"nodes"`
	Add    int `json:"add"`
	Remove int `json:"remove"`
	Keys   int `json:"keys"`
	Sets   int `json:"sets"`
	// Rows hold one summary per setup.
	Rows []RemapStat `json:"rows"`
}

// RemapStat summarises one setup over the name sets.
type RemapStat struct {
	// Setup is the setup's label, Algo its algorithm, VNodes the ring's
	// points per node (0 for other algorithms).
	Setup  string `json:"setup"`
	Algo   string `json:"algo"`
	VNodes int    `json:"vnodes,omitempty"`
	// Theory is the expected moved share ([theory.Moved]).
	Theory float64 `json:"theory"`
	// MinMoved, AvgMoved and MaxMoved are the moved shares over the sets.
	MinMoved float64 `json:"min_moved"`
	AvgMoved float64 `json:"avg_moved"`
	MaxMoved float64 `json:"max_moved"`
	// ToNew is the mean share of moved keys that went to the added
	// nodes.
	ToNew float64 `json:"to_new"`
	// Donors is the mean number of old nodes that gave keys away.
	Donors float64 `json:"donors"`
	// MaxAvg, MinAvg and Spread describe the key counts after the change,
	// averaged over the sets.
	MaxAvg float64 `json:"max_avg"`
	MinAvg float64 `json:"min_avg"`
	Spread float64 `json:"spread"`
}

// Remap runs the remap experiment.
func Remap(cfg RemapConfig) (*RemapResult, error) {
	if cfg.Nodes < 1 || cfg.Add < 0 || cfg.Remove < 0 || cfg.Remove >= cfg.Nodes || cfg.Add+cfg.Remove == 0 || cfg.Sets < 1 {
		return nil, fmt.Errorf("%w: remap needs nodes >= 1, a change (add or remove), remove < nodes and sets >= 1", kolco.ErrBadConfig)
	}
	res := &RemapResult{Nodes: cfg.Nodes, Add: cfg.Add, Remove: cfg.Remove, Keys: cfg.Keys.Len(), Sets: cfg.Sets}
	total := len(cfg.Setups) * cfg.Sets
	for si, s := range cfg.Setups {
		var moved, toNew, donors, maxes, mins, spreads []float64
		for set := range cfg.Sets {
			m, err := remapOnce(s, cfg, set)
			if err != nil {
				return nil, s.wrap(err)
			}
			moved, toNew, donors = append(moved, m[0]), append(toNew, m[1]), append(donors, m[2])
			maxes, mins, spreads = append(maxes, m[3]), append(mins, m[4]), append(spreads, m[5])
			cfg.Progress.step(si*cfg.Sets+set+1, total, "remap")
		}
		row := RemapStat{Setup: s.Label(), Algo: s.Algo, VNodes: ringV(s),
			Theory: theory.Moved(s.Algo, cfg.Nodes, cfg.Nodes+cfg.Add-cfg.Remove)}
		row.MinMoved, row.AvgMoved, row.MaxMoved = minAvgMax(moved)
		row.ToNew, row.Donors = stats.Mean(toNew), stats.Mean(donors)
		row.MaxAvg, row.MinAvg, row.Spread = stats.Mean(maxes), stats.Mean(mins), stats.Mean(spreads)
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// remapOnce returns moved share, share to new nodes, donors, max/avg,
// min/avg and spread after the change, for one name set.
func remapOnce(s Setup, cfg RemapConfig, set int) ([6]float64, error) {
	var out [6]float64
	prefix := setPrefix(set)
	p, err := s.New(nodeNames(prefix, cfg.Nodes))
	if err != nil {
		return out, err
	}
	before, err := keys.Assign(p, cfg.Keys)
	if err != nil {
		return out, err
	}
	var added []kolco.Node
	for i := range cfg.Add {
		added = append(added, kolco.Node{ID: prefix + "-" + strconv.Itoa(cfg.Nodes+i)})
	}
	if len(added) > 0 {
		if err := p.Add(added...); err != nil {
			return out, err
		}
	}
	var removed []string
	for i := range cfg.Remove {
		removed = append(removed, prefix+"-"+strconv.Itoa(cfg.Nodes-1-i))
	}
	if len(removed) > 0 {
		if err := p.Remove(removed...); err != nil {
			return out, err
		}
	}
	after, err := keys.Assign(p, cfg.Keys)
	if err != nil {
		return out, err
	}
	d := keys.Compare(before, after, cfg.Keys)
	isNew := make([]bool, len(after.Nodes))
	for _, n := range added {
		isNew[after.Index(n.ID)] = true
	}
	toNew, donors := 0, 0
	gave := make([]bool, len(d.From))
	for _, e := range d.Edges {
		gave[e.From] = true
		if isNew[e.To] {
			toNew += e.Keys
		}
	}
	for _, g := range gave {
		if g {
			donors++
		}
	}
	out[0] = float64(d.Moved) / float64(cfg.Keys.Len())
	out[1] = float64(toNew) / float64(max(d.Moved, 1))
	out[2] = float64(donors)
	out[3], out[4], out[5] = shareStats(after.Counts())
	return out, nil
}

// Tables renders the result as tables in format f.
func (r *RemapResult) Tables(f report.Format) []report.Table {
	change := fmt.Sprintf("%d -> %s", r.Nodes, report.Count(r.Nodes+r.Add-r.Remove, "node", "nodes"))
	t := report.Table{
		Title:   fmt.Sprintf("remap %s, %s, %s", change, report.Count(r.Keys, "key", "keys"), report.Count(r.Sets, "name set", "name sets")),
		Columns: []string{"setup", "theory", "min moved", "avg moved", "max moved", "to new", "donors", "max/avg", "min/avg", "spread"},
	}
	for _, x := range r.Rows {
		toNew := f.Pct(x.ToNew, 1)
		if r.Add == 0 {
			toNew = "-"
		}
		t.Add(x.Setup, f.Pct(x.Theory, 2), f.Pct(x.MinMoved, 2), f.Pct(x.AvgMoved, 2), f.Pct(x.MaxMoved, 2),
			toNew, f.Num(x.Donors, 1), f.Num(x.MaxAvg, 2), f.Num(x.MinAvg, 2), f.Pct(x.Spread, 1))
	}
	return []report.Table{t}
}
