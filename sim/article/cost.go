package article

import "github.com/kolco-dev/kolco/sim/plan"

// CostFigures are the article's worked examples of what a membership
// change costs: a cache in front of a database and a storage cluster, each
// going from 10 to 11 nodes, with the moved share of the theory: N/(N+1) for
// hash % N and 1/(N+1) for a ring.
type CostFigures struct {
	Cache   CacheCost   `json:"cache"`
	Storage StorageCost `json:"storage"`
}

// CacheCost is the database load right after a change of a cache tier.
type CacheCost struct {
	RPS          float64 `json:"rps"`
	HitRate      float64 `json:"hit_rate"`
	SteadyDB     float64 `json:"steady_db_rps"`
	ModuloCold   float64 `json:"modulo_cold"`
	ModuloDB     float64 `json:"modulo_db_rps"`
	ModuloFactor float64 `json:"modulo_factor"`
	RingCold     float64 `json:"ring_cold"`
	RingDB       float64 `json:"ring_db_rps"`
	RingFactor   float64 `json:"ring_factor"`
}

// StorageCost is the data sent over the network by a change of a storage
// cluster, in bytes.
type StorageCost struct {
	Total       float64 `json:"total_bytes"`
	ModuloMoved float64 `json:"modulo_moved_bytes"`
	RingMoved   float64 `json:"ring_moved_bytes"`
	RingPerNode float64 `json:"ring_per_old_node_bytes"`
}

// Cost computes the article's examples: 100 000 RPS at a 95% hit
// rate, and 3 TB on 10 nodes, each going from 10 to 11 nodes.
func Cost() CostFigures {
	const (
		n       = 10.0
		rps     = 100_000.0
		hitRate = 0.95
		data    = 3e12
	)
	modCold, ringCold := n/(n+1), 1/(n+1)
	steady := rps * (1 - hitRate)
	c := CacheCost{RPS: rps, HitRate: hitRate, SteadyDB: steady, ModuloCold: modCold, RingCold: ringCold}
	c.ModuloDB = plan.DatabaseLoad(rps, hitRate, modCold)
	c.ModuloFactor = c.ModuloDB / steady
	c.RingDB = plan.DatabaseLoad(rps, hitRate, ringCold)
	c.RingFactor = c.RingDB / steady
	s := StorageCost{Total: data, ModuloMoved: data * modCold, RingMoved: data * ringCold}
	s.RingPerNode = s.RingMoved / n
	return CostFigures{Cache: c, Storage: s}
}
