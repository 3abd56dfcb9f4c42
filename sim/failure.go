package sim

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/report"
)

// FailureConfig sets up the failure experiment: Nodes equal nodes (or the
// given node set), then Cascade failures one after the other, each of the
// most loaded survivor, the first of Victim when it is set.
type FailureConfig struct {
	// Setups are the contenders.
	Setups []Setup
	// Nodes is the number of nodes "node-0" ...; ignored when NodeSet is set.
	Nodes int
	// NodeSet, if not nil, is the node set.
	NodeSet []kolco.Node
	// Victim, if set, is the first node to fail.
	Victim string
	// Cascade is the number of failures, one after the other.
	Cascade int
	// Keys is the key sample.
	Keys *keys.Set
	// Progress, if not nil, is told of each failure.
	Progress Progress
}

// FailureResult is the failure experiment's outcome.
type FailureResult struct {
	// Keys is the sample size.
	Keys int `json:"keys"`
	// Steps hold every failure of every setup.
	Steps []FailureStep `json:"steps"`
	// Loads holds, per setup, each node's share before the first failure
	// and after the last.
	Loads []NodeLoads `json:"loads"`
}

// FailureStep is one failure of one setup.
type FailureStep struct {
	// Setup is the setup's label; Step counts failures from 1.
	Setup string `json:"setup"`
	Step  int    `json:"step"`
	// Victim is the failed node and VictimShare its share of the keys.
	Victim      string  `json:"victim"`
	VictimShare float64 `json:"victim_share"`
	// Receivers is how many survivors took its keys; Moved the share of
	// all keys that changed owner (ideally VictimShare).
	Receivers int     `json:"receivers"`
	Moved     float64 `json:"moved"`
	// Worst is the survivor with the largest share after the failure,
	// with its share before and after.
	Worst       string  `json:"worst"`
	WorstBefore float64 `json:"worst_before"`
	WorstAfter  float64 `json:"worst_after"`
	// MaxAvg is the largest share over the mean after the failure.
	MaxAvg float64 `json:"max_avg"`
}

// NodeLoads is the share of each node of one setup before and after a change.
type NodeLoads struct {
	// Setup is the setup's label.
	Setup string `json:"setup"`
	// Nodes are the node IDs; Before and After each node's share of the
	// keys, 0 where it is absent.
	Nodes  []string  `json:"nodes"`
	Before []float64 `json:"before"`
	After  []float64 `json:"after"`
}

// Failure runs the failure experiment.
func Failure(cfg FailureConfig) (*FailureResult, error) {
	nodes := cfg.NodeSet
	if nodes == nil {
		nodes = nodeNames("node", cfg.Nodes)
	}
	if cfg.Cascade < 1 || cfg.Cascade >= len(nodes) {
		return nil, fmt.Errorf("%w: failure needs 1 <= cascade < nodes (%s, cascade %d)", kolco.ErrBadConfig, report.Count(len(nodes), "node", "nodes"), cfg.Cascade)
	}
	res := &FailureResult{Keys: cfg.Keys.Len()}
	for si, s := range cfg.Setups {
		p, err := s.New(nodes)
		if err != nil {
			return nil, s.wrap(err)
		}
		before, err := keys.Assign(p, cfg.Keys)
		if err != nil {
			return nil, err
		}
		first := before
		for step := 1; step <= cfg.Cascade; step++ {
			counts := before.Counts()
			victim := int32(-1)
			if step == 1 && cfg.Victim != "" {
				if victim = before.Index(cfg.Victim); victim < 0 {
					return nil, fmt.Errorf("%w: victim %q", kolco.ErrUnknownNode, cfg.Victim)
				}
			} else {
				victim = int32(slices.Index(counts, slices.Max(counts)))
			}
			id := before.Nodes[victim].ID
			if err := p.Remove(id); err != nil {
				return nil, err
			}
			after, err := keys.Assign(p, cfg.Keys)
			if err != nil {
				return nil, err
			}
			res.Steps = append(res.Steps, failureStep(s.Label(), step, before, after, victim, cfg.Keys))
			before = after
			cfg.Progress.step(si*cfg.Cascade+step, len(cfg.Setups)*cfg.Cascade, "failure")
		}
		res.Loads = append(res.Loads, nodeLoads(s.Label(), first, before))
	}
	return res, nil
}

func failureStep(label string, step int, before, after keys.Assignment, victim int32, ks *keys.Set) FailureStep {
	d := keys.Compare(before, after, ks)
	n := float64(ks.Len())
	cb, ca := before.Counts(), after.Counts()
	got := make([]int, len(after.Nodes))
	for _, e := range d.Edges {
		got[e.To] += e.Keys
	}
	worst := slices.Index(ca, slices.Max(ca))
	st := FailureStep{Setup: label, Step: step, Victim: before.Nodes[victim].ID,
		VictimShare: float64(cb[victim]) / n, Moved: float64(d.Moved) / n,
		Worst: after.Nodes[worst].ID, WorstAfter: float64(ca[worst]) / n}
	if b := before.Index(st.Worst); b >= 0 {
		st.WorstBefore = float64(cb[b]) / n
	}
	for _, g := range got {
		if g > 0 {
			st.Receivers++
		}
	}
	st.MaxAvg, _, _ = shareStats(ca)
	return st
}

// nodeLoads lists the share of every node of before, and of after (0 for
// nodes gone, appended for nodes new).
func nodeLoads(label string, before, after keys.Assignment) NodeLoads {
	nl := NodeLoads{Setup: label}
	cb, ca := before.Counts(), after.Counts()
	nb, na := float64(max(len(before.Owner), 1)), float64(max(len(after.Owner), 1))
	for i, n := range before.Nodes {
		nl.Nodes = append(nl.Nodes, n.ID)
		nl.Before = append(nl.Before, float64(cb[i])/nb)
		a := 0.0
		if j := after.Index(n.ID); j >= 0 {
			a = float64(ca[j]) / na
		}
		nl.After = append(nl.After, a)
	}
	for j, n := range after.Nodes {
		if before.Index(n.ID) < 0 {
			nl.Nodes = append(nl.Nodes, n.ID)
			nl.Before = append(nl.Before, 0)
			nl.After = append(nl.After, float64(ca[j])/na)
		}
	}
	return nl
}

// Tables renders the result as tables in format f.
func (r *FailureResult) Tables(f report.Format) []report.Table {
	t := report.Table{
		Title:   fmt.Sprintf("failure of the most loaded node (cascade), %s", report.Count(r.Keys, "key", "keys")),
		Columns: []string{"setup", "step", "victim", "its share", "moved", "receivers", "worst survivor", "before", "after", "max/avg"},
	}
	for _, x := range r.Steps {
		t.Add(x.Setup, strconv.Itoa(x.Step), x.Victim, f.Pct(x.VictimShare, 2), f.Pct(x.Moved, 2), strconv.Itoa(x.Receivers),
			x.Worst, f.Pct(x.WorstBefore, 2), f.Pct(x.WorstAfter, 2), f.Num(x.MaxAvg, 2))
	}
	return []report.Table{t}
}
