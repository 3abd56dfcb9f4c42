// Package plan computes what a change of membership costs before it is
// made. Given the placement before the change and the placement after it -
// two builds of one algorithm, two configurations of another system, any
// two [kolco.Placement]s - it places a key sample on both, compares them
// key by key, and reports the keys, bytes and requests that move, every
// donor -> receiver flow, each node's load before and after, and, for a
// cache tier, the database's load right after the change.
//
// The cost model is that of the article this module reproduces (package
// sim/article): right after a change every request to a moved key misses
// the cache, the others miss at the steady rate ([DatabaseLoad]). Applied
// warm, as kolco proxy can apply a change, a moved key misses only when
// its previous owner cannot answer for it ([WarmImpact]). Beside each
// measured figure stands the closed form of package theory: the least share
// any placement must move, or hash % N's own.
//
// A history - successive configurations - is planned change by change
// ([ComputeHistory]), counting the keys that return to a node holding an
// old copy of them. Every moved key can be listed ([Config.ListMoves]).
package plan

import (
	"fmt"
	"math"
	"slices"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/theory"
)

// Config describes a planned change.
type Config struct {
	// Label names the placement in the tables, such as "ring(V=160)".
	Label string
	// Before and After are the placements before and after the change.
	// They are compared key by key, so the plan is exact for whatever
	// they are: one algorithm before and after a change applied to it,
	// or two configurations of a system.
	Before, After kolco.Placement
	// Keys is the key sample, with sizes and rates if known.
	Keys *keys.Set
	// RPS and HitRate describe a cache tier: requests per second to the
	// cache and its steady hit rate. RPS = 0 leaves the cache model out.
	RPS, HitRate float64
	// Data is the total stored bytes; when set, key sizes are scaled so
	// that the sample stands for it. Zero leaves sizes as they are.
	Data float64
	// Warm adds to the cache model (RPS > 0) the database's load when the
	// change is applied warm ([WarmImpact]): for a migration window a
	// read that misses on a key's new owner reads its previous owner.
	Warm bool
	// Down lists the IDs of nodes that will not answer during the window,
	// such as a failed server being replaced: the keys they give up miss
	// even warm. Every ID must be a node before the change (or, for
	// ComputeHistory, before some step).
	Down []string
	// ListMoves keeps every moved key in Result.Moves.
	ListMoves bool
	// Theory, if not nil, returns the closed-form moved share printed
	// beside the measurement from the node sets before and after, such
	// as hash % N's [theory.ModuloMoved] of their sizes. Nil means
	// [theory.MovedShares], the least any placement can move given the
	// weights.
	Theory func(before, after []kolco.Node) float64
	// Traffic, when set, weighs the keys by a trace's requests ([Traffic]):
	// the key sample is then the trace's keys (Keys nil, or KeysOf's),
	// RPS must be zero, and Result.Traffic says what the change costs by
	// that traffic; HitRate is the steady hit rate when the trace does not
	// say and no memory is given.
	Traffic *Traffic
	// MoveRate, for a store whose change moves its data (kolco proxy's
	// store pools), is the keys a second the mover sends from each old
	// node, all old nodes at once (store.rate); it adds the time the move
	// takes, Result.MoveSeconds. Zero leaves it out.
	MoveRate float64
}

// Result is what a change costs.
type Result struct {
	// Label is the placement's label (the JSON key is "setup"), Keys the
	// sample size, Before and After the node counts.
	Label  string `json:"setup"`
	Keys   int    `json:"keys"`
	Before int    `json:"nodes_before"`
	After  int    `json:"nodes_after"`
	// Moved is the number of keys that change owner; MovedShare their
	// share of the keys, MovedBytes their bytes, MovedRequests their share
	// of the requests.
	Moved         int     `json:"moved_keys"`
	MovedShare    float64 `json:"moved_share"`
	MovedBytes    float64 `json:"moved_bytes"`
	MovedRequests float64 `json:"moved_requests_share"`
	// TheoryShare is the closed form's moved share (see Config.Theory).
	TheoryShare float64 `json:"theory_share"`
	// TotalBytes is the sample's size (Data when given).
	TotalBytes float64 `json:"total_bytes"`
	// Flows are the donor -> receiver moves, largest first.
	Flows []Flow `json:"flows"`
	// Loads are the nodes before and after.
	Loads []Load `json:"loads"`
	// Cache is set when a request rate was given.
	Cache *CacheImpact `json:"cache,omitempty"`
	// MoveSeconds, when Config.MoveRate is set, is how long a store's
	// mover takes to send the moved keys: the most any one old node sends,
	// over the rate. Keys that requests move first shorten it.
	MoveSeconds float64 `json:"move_seconds,omitempty"`
	// Step numbers the change in a history (ComputeHistory) from 1; it is
	// 0 for a single change.
	Step int `json:"step,omitempty"`
	// Returned counts, in a history, the moved keys whose new owner held
	// them at an earlier step, before the last change: the copy left
	// there, unless deleted or expired since, would be served stale.
	// ReturnedBytes and ReturnedRequests are their bytes and share of
	// requests. Every key is taken to have been cached on each owner it
	// had. Zero for a single change.
	Returned         int     `json:"returned_keys,omitempty"`
	ReturnedBytes    float64 `json:"returned_bytes,omitempty"`
	ReturnedRequests float64 `json:"returned_requests_share,omitempty"`
	// Moves lists every moved key when Config.ListMoves is set, in the
	// sample's order.
	Moves []Move `json:"-"`
	// Traffic is the change by a trace's traffic, when Config.Traffic is
	// set.
	Traffic *TrafficImpact `json:"traffic,omitempty"`
}

// Move is one key that changes owner.
type Move struct {
	// Key moves from node From to node To.
	Key, From, To string
	// Returns reports, in a history, that To held the key at an earlier
	// step (see Result.Returned).
	Returns bool
}

// Flow is the keys moving from one node to another.
type Flow struct {
	// From and To are the donor and the receiver; Keys, Bytes and
	// Requests (a share of all requests) what moves between them.
	From     string  `json:"from"`
	To       string  `json:"to"`
	Keys     int     `json:"keys"`
	Bytes    float64 `json:"bytes"`
	Requests float64 `json:"requests_share"`
}

// Load is one node before and after the change.
type Load struct {
	// Node is the node's ID; KeysBefore, KeysAfter, BytesBefore and
	// BytesAfter what it holds before and after.
	Node        string  `json:"node"`
	KeysBefore  int     `json:"keys_before"`
	KeysAfter   int     `json:"keys_after"`
	BytesBefore float64 `json:"bytes_before"`
	BytesAfter  float64 `json:"bytes_after"`
	// ShareBefore and ShareAfter are shares of the requests.
	ShareBefore float64 `json:"request_share_before"`
	ShareAfter  float64 `json:"request_share_after"`
	// Sends and Receives are the bytes the node sends and receives.
	Sends    float64 `json:"sends_bytes"`
	Receives float64 `json:"receives_bytes"`
}

// Compute places the key sample before and after the change and returns
// what the change costs. The error wraps kolco.ErrBadConfig for a missing
// placement or key sample, a negative rate or size, or a hit rate outside
// [0, 1]; otherwise it is a placement's own.
func Compute(cfg Config) (*Result, error) {
	if cfg.Before == nil || cfg.After == nil {
		return nil, fmt.Errorf("%w: a plan needs the placements before and after and a key sample", kolco.ErrBadConfig)
	}
	ks, err := cfg.check()
	if err != nil {
		return nil, err
	}
	as, err := assignAll(ks, cfg.Before, cfg.After)
	if err != nil {
		return nil, err
	}
	if err := checkDown(cfg.Down, as[:1]); err != nil {
		return nil, err
	}
	return compare(cfg, ks, as[0], as[1])
}

// check validates what every plan reads besides its placements and
// returns the key sample, scaled to Data.
func (cfg Config) check() (*keys.Set, error) {
	if cfg.Traffic != nil {
		if err := cfg.Traffic.check(cfg); err != nil {
			return nil, err
		}
		if cfg.Keys == nil {
			cfg.Keys = KeysOf(cfg.Traffic.Profile)
		}
	}
	if cfg.Keys == nil || cfg.Keys.Len() == 0 {
		return nil, fmt.Errorf("%w: a plan needs a key sample of one key or more", kolco.ErrBadConfig)
	}
	if cfg.RPS < 0 || cfg.HitRate < 0 || cfg.HitRate > 1 || cfg.Data < 0 {
		return nil, fmt.Errorf("%w: rps and data must be >= 0 and the hit rate in [0, 1]", kolco.ErrBadConfig)
	}
	if !(cfg.MoveRate >= 0) || math.IsInf(cfg.MoveRate, 1) {
		return nil, fmt.Errorf("%w: the move rate must be a finite number of keys a second >= 0 (got %v)", kolco.ErrBadConfig, cfg.MoveRate)
	}
	if cfg.Data > 0 {
		return cfg.Keys.ScaledTo(cfg.Data), nil
	}
	return cfg.Keys, nil
}

// assignAll places the sample on every placement.
func assignAll(ks *keys.Set, ps ...kolco.Placement) ([]keys.Assignment, error) {
	out := make([]keys.Assignment, len(ps))
	for i, p := range ps {
		var err error
		if out[i], err = keys.Assign(p, ks); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkDown returns an error for a down ID that is a node of none of as.
func checkDown(down []string, as []keys.Assignment) error {
	for _, id := range down {
		if !slices.ContainsFunc(as, func(a keys.Assignment) bool { return a.Index(id) >= 0 }) {
			return fmt.Errorf("%w: down node %q is not a node before the change", kolco.ErrBadConfig, id)
		}
	}
	return nil
}

// compare measures the change from the two assignments of the sample.
func compare(cfg Config, ks *keys.Set, before, after keys.Assignment) (*Result, error) {
	d := keys.Compare(before, after, ks)
	res := &Result{Label: cfg.Label, Keys: ks.Len(), Before: len(before.Nodes), After: len(after.Nodes),
		Moved: d.Moved, MovedShare: float64(d.Moved) / float64(ks.Len()), TotalBytes: ks.TotalSize(),
		TheoryShare: theoryShare(cfg, before.Nodes, after.Nodes)}
	totalRate := ks.TotalRate()
	sends, recv := make([]float64, len(d.From)), make([]float64, len(d.To))
	sent := make([]int, len(d.From)) // keys
	downCold := 0.0                  // requests to moved keys whose previous owner is down
	for _, e := range d.Edges {
		res.Flows = append(res.Flows, Flow{From: d.From[e.From].ID, To: d.To[e.To].ID, Keys: e.Keys,
			Bytes: e.Bytes, Requests: e.Requests / totalRate})
		res.MovedBytes += e.Bytes
		res.MovedRequests += e.Requests / totalRate
		sends[e.From] += e.Bytes
		sent[e.From] += e.Keys
		recv[e.To] += e.Bytes
		if slices.Contains(cfg.Down, d.From[e.From].ID) {
			downCold += e.Requests / totalRate
		}
	}
	slices.SortStableFunc(res.Flows, func(a, b Flow) int { return b.Keys - a.Keys })
	res.Loads = loads(before, after, ks, sends, recv)
	if cfg.MoveRate > 0 && len(sent) > 0 {
		res.MoveSeconds = float64(slices.Max(sent)) / cfg.MoveRate
	}
	if cfg.RPS > 0 {
		res.Cache = cacheImpact(cfg.RPS, cfg.HitRate, res.MovedRequests, res.TheoryShare)
		if cfg.Warm {
			res.Cache.Warm = warmImpact(res.Cache, res.MovedRequests, downCold, theoryDown(cfg.Down, before.Nodes, after))
		}
	}
	if cfg.ListMoves {
		res.Moves = moves(ks, before, after)
	}
	if cfg.Traffic != nil {
		var err error
		if res.Traffic, err = trafficImpact(cfg, before, after); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// moves lists the keys whose owner differs between the assignments.
func moves(ks *keys.Set, before, after keys.Assignment) []Move {
	var out []Move
	for i, o := range before.Owner {
		from, to := before.Nodes[o].ID, after.Nodes[after.Owner[i]].ID
		if from != to {
			out = append(out, Move{Key: ks.Key(i), From: from, To: to})
		}
	}
	return out
}

// theoryShare returns the closed-form moved share of the change.
func theoryShare(cfg Config, before, after []kolco.Node) float64 {
	if cfg.Theory != nil {
		return cfg.Theory(before, after)
	}
	return theory.MovedShares(before, after)
}

// loads lists every node before and after, the nodes that leave with
// nothing after and the nodes that join last.
func loads(before, after keys.Assignment, ks *keys.Set, sends, recv []float64) []Load {
	cb, ca := before.Counts(), after.Counts()
	bb, ba := before.Loads(ks.Size), after.Loads(ks.Size)
	rb, ra := before.Loads(ks.Rate), after.Loads(ks.Rate)
	total := ks.TotalRate()
	var out []Load
	for i, n := range before.Nodes {
		l := Load{Node: n.ID, KeysBefore: cb[i], BytesBefore: bb[i], ShareBefore: rb[i] / total, Sends: sends[i]}
		if j := after.Index(n.ID); j >= 0 {
			l.KeysAfter, l.BytesAfter, l.ShareAfter, l.Receives = ca[j], ba[j], ra[j]/total, recv[j]
		}
		out = append(out, l)
	}
	for j, n := range after.Nodes {
		if before.Index(n.ID) < 0 {
			out = append(out, Load{Node: n.ID, KeysAfter: ca[j], BytesAfter: ba[j], ShareAfter: ra[j] / total, Receives: recv[j]})
		}
	}
	return out
}
