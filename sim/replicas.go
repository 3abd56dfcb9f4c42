package sim

import (
	"fmt"
	"sync"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/sim/internal/parallel"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/report"
	"github.com/kolco-dev/kolco/sim/theory"
)

// ReplicasConfig sets up the replicas experiment: for each key, the
// Replicas owners LocateN returns, and how many distinct nodes and zones
// they span.
type ReplicasConfig struct {
	// Setups are the contenders.
	Setups []Setup
	// Nodes are the nodes, with their zones.
	Nodes []kolco.Node
	// Replicas is the number of owners per key.
	Replicas int
	// Keys is the key sample.
	Keys *keys.Set
}

// ReplicasResult is the replicas experiment's outcome.
type ReplicasResult struct {
	// Keys and Replicas echo the configuration; Zones counts the zones.
	Keys     int `json:"keys"`
	Replicas int `json:"replicas"`
	Zones    int `json:"zones"`
	// Rows hold one entry per setup.
	Rows []ReplicaStat `json:"rows"`
}

// ReplicaStat is one setup.
type ReplicaStat struct {
	// Setup is the setup's label.
	Setup string `json:"setup"`
	// MeanNodes and MeanZones are the mean numbers of distinct nodes and
	// zones per replica set.
	MeanNodes float64 `json:"mean_nodes"`
	MeanZones float64 `json:"mean_zones"`
	// FullZones is the share of keys whose replicas span min(replicas,
	// zones) zones, the most possible.
	FullZones float64 `json:"full_zones"`
	// ZoneHist[z] is the share of keys whose replicas span z zones.
	ZoneHist []float64 `json:"zone_hist"`
	// RandomFull is FullZones for replica sets of distinct nodes drawn
	// uniformly at random ([theory.RandomFullZones]): what a placement that
	// ignores zones is expected to show with equal weights.
	RandomFull float64 `json:"random_full_zones"`
}

// Replicas runs the replicas experiment.
func Replicas(cfg ReplicasConfig) (*ReplicasResult, error) {
	if cfg.Replicas < 1 {
		return nil, fmt.Errorf("%w (got %d)", kolco.ErrBadCount, cfg.Replicas)
	}
	zoneOf := map[string]int{}
	zones := map[string]int{}
	for _, n := range cfg.Nodes {
		if _, ok := zones[n.Zone]; !ok {
			zones[n.Zone] = len(zones)
		}
		zoneOf[n.ID] = zones[n.Zone]
	}
	res := &ReplicasResult{Keys: cfg.Keys.Len(), Replicas: cfg.Replicas, Zones: len(zones)}
	sizes := make([]int, len(zones))
	for _, n := range cfg.Nodes {
		sizes[zones[n.Zone]]++
	}
	random := theory.RandomFullZones(sizes, min(cfg.Replicas, len(cfg.Nodes)))
	best := min(cfg.Replicas, len(zones))
	for _, s := range cfg.Setups {
		p, err := s.New(cfg.Nodes)
		if err != nil {
			return nil, s.wrap(err)
		}
		nodes, hist, err := zoneSpans(p, cfg.Keys, cfg.Replicas, zoneOf, len(zones))
		if err != nil {
			return nil, err
		}
		n := float64(cfg.Keys.Len())
		st := ReplicaStat{Setup: s.Label(), MeanNodes: float64(nodes) / n, RandomFull: random}
		sum := 0
		for z, c := range hist {
			sum += z * c
			st.ZoneHist = append(st.ZoneHist, float64(c)/n)
		}
		st.MeanZones = float64(sum) / n
		st.FullZones = float64(hist[best]) / n
		res.Rows = append(res.Rows, st)
	}
	return res, nil
}

// zoneSpans looks up r owners of every key on all cores and returns the
// total number of owners found and how many keys' owners span each number
// of zones.
func zoneSpans(p kolco.Placement, ks *keys.Set, r int, zoneOf map[string]int, zones int) (int, []int, error) {
	var (
		mu    sync.Mutex
		first error
		nodes int
		hist  = make([]int, r+1)
	)
	parallel.For(ks.Len(), func(lo, hi int) {
		dst := make([]kolco.Node, 0, r)
		seen := make([]bool, zones)
		h := make([]int, r+1)
		local := 0
		var err error
		for i := lo; i < hi && err == nil; i++ {
			dst, err = p.LocateN(dst[:0], ks.Key(i), r)
			clear(seen)
			z := 0
			for _, n := range dst {
				if zi := zoneOf[n.ID]; !seen[zi] {
					seen[zi] = true
					z++
				}
			}
			local += len(dst)
			h[z]++
		}
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
		}
		nodes += local
		for z, c := range h {
			hist[z] += c
		}
	})
	return nodes, hist, first
}

// Tables renders the result as tables in format f.
func (r *ReplicasResult) Tables(f report.Format) []report.Table {
	t := report.Table{
		Title:   fmt.Sprintf("replicas: %s per key over %s, %s", report.Count(r.Replicas, "owner", "owners"), report.Count(r.Zones, "zone", "zones"), report.Count(r.Keys, "key", "keys")),
		Columns: []string{"setup", "distinct nodes", "distinct zones", "keys in " + report.Count(min(r.Replicas, r.Zones), "zone", "zones"), "random sets"},
	}
	for _, x := range r.Rows {
		t.Add(x.Setup, f.Num(x.MeanNodes, 3), f.Num(x.MeanZones, 3), f.Pct(x.FullZones, 2), f.Pct(x.RandomFull, 2))
	}
	return []report.Table{t}
}
