package article

// Figures holds the results of every measurement of the article, with
// the article's set-up: keys "user:0", "user:1", ..., nodes "node-0", ...,
// hashed with md5 in the article's ring ([ring.ArticleConfig]).
type Figures struct {
	Modulo     []ModuloRow    `json:"modulo"`
	Demo       Demo           `json:"demo"`
	OneRing    []RemapRow     `json:"one_ring"`
	NameSets   []NameSetRow   `json:"name_sets"`
	Failures   []FailureRow   `json:"failures"`
	Weights    []WeightRow    `json:"weights"`
	Rendezvous RendezvousRow  `json:"rendezvous"`
	Cost       CostFigures    `json:"cost"`
	Keys       map[string]int `json:"keys"`
}

// ModuloRow is one line of the hash % N table.
type ModuloRow struct {
	Old   int     `json:"old"`
	New   int     `json:"new"`
	Moved float64 `json:"moved"`
}

// Demo is the article's three-node example: the owner of user:42 on
// cache-a, cache-b and cache-c, its two replicas, and its owner once the
// first owner is removed.
type Demo struct {
	Key      string   `json:"key"`
	Owner    string   `json:"owner"`
	Replicas []string `json:"replicas"`
	After    string   `json:"owner_after_removal"`
}

// RemapRow is one 10 -> 11 measurement on one ring.
type RemapRow struct {
	VNodes int     `json:"vnodes"`
	Moved  float64 `json:"moved"`
	ToNew  float64 `json:"to_new"`
	Donors int     `json:"donors"`
	Max    float64 `json:"max"`
	Min    float64 `json:"min"`
	Spread float64 `json:"spread"`
}

// NameSetRow summarises the 10 -> 11 measurement over 30 node name sets.
type NameSetRow struct {
	VNodes     int     `json:"vnodes"`
	MinMoved   float64 `json:"min_moved"`
	AvgMoved   float64 `json:"avg_moved"`
	MaxMoved   float64 `json:"max_moved"`
	MeanMax    float64 `json:"mean_max"`
	MeanSpread float64 `json:"mean_spread"`
}

// FailureRow is the removal of the most loaded of 10 nodes.
type FailureRow struct {
	VNodes      int     `json:"vnodes"`
	Victim      string  `json:"victim"`
	VictimShare float64 `json:"victim_share"`
	Receivers   int     `json:"receivers"`
	Worst       string  `json:"worst_receiver"`
	WorstBefore float64 `json:"worst_before"`
	WorstAfter  float64 `json:"worst_after"`
}

// WeightRow is the share of each node of a weighted ring.
type WeightRow struct {
	VNodes int       `json:"vnodes"`
	Nodes  []string  `json:"nodes"`
	Shares []float64 `json:"shares"`
}

// RendezvousRow is the article's rendezvous 10 -> 11 measurement.
type RendezvousRow struct {
	Moved float64 `json:"moved"`
	ToNew float64 `json:"to_new"`
}
