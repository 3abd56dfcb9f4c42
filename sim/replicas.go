package sim

import (
	"fmt"
	"sync"

	"github.com/kolco-dev/kolco"
)

// ReplicasConfig sets up the replicas experiment: for each key, the
// Replicas owners LocateN returns, and how many distinct nodes and zones
// they span.
type ReplicasConfig struct {
	Setups   []Setup
	Nodes    []kolco.Node
	Replicas int
	Keys     *KeySet
}

// ReplicasResult is the replicas experiment's outcome.
type ReplicasResult struct {
	Keys     int           `json:"keys"`
	Replicas int           `json:"replicas"`
	Zones    int           `json:"zones"`
	Rows     []ReplicaStat `json:"rows"`
}

// ReplicaStat is one setup.
type ReplicaStat struct {
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
	best := min(cfg.Replicas, len(zones))
	for _, s := range cfg.Setups {
		p, err := s.New(cfg.Nodes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Label(), err)
		}
		var (
			mu    sync.Mutex
			first error
			nodes int
			hist  = make([]int, cfg.Replicas+1)
		)
		parallel(cfg.Keys.Len(), func(lo, hi int) {
			dst := make([]kolco.Node, 0, cfg.Replicas)
			seen := make([]bool, len(zones))
			h := make([]int, cfg.Replicas+1)
			local := 0
			var err error
			for i := lo; i < hi && err == nil; i++ {
				dst, err = p.LocateN(dst[:0], cfg.Keys.Key(i), cfg.Replicas)
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
			first = cmpErr(first, err)
			nodes += local
			for z, c := range h {
				hist[z] += c
			}
		})
		if first != nil {
			return nil, first
		}
		n := float64(cfg.Keys.Len())
		st := ReplicaStat{Setup: s.Label(), MeanNodes: float64(nodes) / n}
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

// Tables renders the result.
func (r *ReplicasResult) Tables() []Table {
	t := Table{
		Title:   fmt.Sprintf("replicas: %d owners per key over %d zones, %d keys", r.Replicas, r.Zones, r.Keys),
		Columns: []string{"setup", "distinct nodes", "distinct zones", fmt.Sprintf("keys in %d zones", min(r.Replicas, r.Zones))},
	}
	for _, x := range r.Rows {
		t.add(x.Setup, f(x.MeanNodes, 3), f(x.MeanZones, 3), Pct(x.FullZones, 2))
	}
	return []Table{t}
}
