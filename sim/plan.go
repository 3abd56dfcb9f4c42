package sim

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/report"
	"github.com/kolco-dev/kolco/sim/theory"
)

// Reweight is one change of weight of a plan.
type Reweight struct {
	// ID names the node and Weight is its new weight.
	ID     string  `json:"id"`
	Weight float64 `json:"weight"`
}

// PlanConfig describes a planned change of membership.
type PlanConfig struct {
	// Setup is the algorithm.
	Setup Setup
	// Before is the current node set.
	Before []kolco.Node
	// Add, Remove and Reweight are the change, applied in that order.
	Add      []kolco.Node
	Remove   []string
	Reweight []Reweight
	// Keys is the key sample, with sizes and rates if known.
	Keys *keys.Set
	// RPS and HitRate describe a cache tier: requests per second to the
	// cache and its steady hit rate. RPS = 0 leaves the cache model out.
	RPS, HitRate float64
	// Data is the total stored bytes; when set, key sizes are scaled so
	// that the sample stands for it. Zero leaves sizes as they are.
	Data float64
}

// PlanResult is what a change costs.
type PlanResult struct {
	// Setup is the setup's label, Keys the sample size, Before and After
	// the node counts.
	Setup  string `json:"setup"`
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
	// TheoryShare is the closed form's moved share: modulo's
	// 1 - min(N,M)/lcm(N,M), or the least any placement can move
	// ([theory.MovedShares]).
	TheoryShare float64 `json:"theory_share"`
	// TotalBytes is the sample's size (Data when given).
	TotalBytes float64 `json:"total_bytes"`
	// Flows are the donor -> receiver moves, largest first.
	Flows []Flow `json:"flows"`
	// Loads are the nodes before and after.
	Loads []Load `json:"loads"`
	// Cache is set when a request rate was given.
	Cache *CacheImpact `json:"cache,omitempty"`
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

// CacheImpact is the seed article's cost model for a cache tier: right
// after the change every request to a moved key misses; the others miss at
// the steady rate ([DatabaseLoad]).
type CacheImpact struct {
	// RPS and HitRate echo the configuration; SteadyDB is the database's
	// steady rate, RPS*(1-HitRate).
	RPS      float64 `json:"rps"`
	HitRate  float64 `json:"hit_rate"`
	SteadyDB float64 `json:"steady_db_rps"`
	// Cold is the share of requests to moved keys; DB the database rate
	// right after the change and Factor DB over SteadyDB.
	Cold   float64 `json:"cold_share"`
	DB     float64 `json:"db_rps_after"`
	Factor float64 `json:"factor"`
	// TheoryDB and TheoryFac are the same with the theory's moved share.
	TheoryDB  float64 `json:"theory_db_rps"`
	TheoryFac float64 `json:"theory_factor"`
}

// Plan computes what a change costs on the key sample.
func Plan(cfg PlanConfig) (*PlanResult, error) {
	if cfg.RPS < 0 || cfg.HitRate < 0 || cfg.HitRate > 1 || cfg.Data < 0 {
		return nil, fmt.Errorf("%w: rps and data must be >= 0 and the hit rate in [0, 1]", kolco.ErrBadConfig)
	}
	ks := cfg.Keys
	if cfg.Data > 0 {
		scaled := *ks
		scaled.Sizes = make([]float64, ks.Len())
		total := ks.TotalSize()
		for i := range scaled.Sizes {
			scaled.Sizes[i] = ks.Size(i) * cfg.Data / total
		}
		ks = &scaled
	}
	before, after, err := planAssign(cfg, ks)
	if err != nil {
		return nil, err
	}
	d := keys.Compare(before, after, ks)
	res := &PlanResult{Setup: cfg.Setup.Label(), Keys: ks.Len(), Before: len(before.Nodes), After: len(after.Nodes),
		Moved: d.Moved, MovedShare: float64(d.Moved) / float64(ks.Len()), TotalBytes: ks.TotalSize(),
		TheoryShare: planTheory(cfg, before, after)}
	totalRate := ks.TotalRate()
	sends, recv := make([]float64, len(d.From)), make([]float64, len(d.To))
	for _, e := range d.Edges {
		res.Flows = append(res.Flows, Flow{From: d.From[e.From].ID, To: d.To[e.To].ID, Keys: e.Keys,
			Bytes: e.Bytes, Requests: e.Requests / totalRate})
		res.MovedBytes += e.Bytes
		res.MovedRequests += e.Requests / totalRate
		sends[e.From] += e.Bytes
		recv[e.To] += e.Bytes
	}
	slices.SortStableFunc(res.Flows, func(a, b Flow) int { return b.Keys - a.Keys })
	res.Loads = planLoads(before, after, ks, sends, recv)
	if cfg.RPS > 0 {
		c := &CacheImpact{RPS: cfg.RPS, HitRate: cfg.HitRate, SteadyDB: cfg.RPS * (1 - cfg.HitRate), Cold: res.MovedRequests}
		c.DB = DatabaseLoad(cfg.RPS, cfg.HitRate, c.Cold)
		c.TheoryDB = DatabaseLoad(cfg.RPS, cfg.HitRate, res.TheoryShare)
		if c.SteadyDB > 0 {
			c.Factor, c.TheoryFac = c.DB/c.SteadyDB, c.TheoryDB/c.SteadyDB
		}
		res.Cache = c
	}
	return res, nil
}

// planTheory returns the closed-form moved share of the change: for
// modulo 1 - min(N,M)/lcm(N,M); for the others the least any placement can
// move, the total variation distance between the weight shares before and
// after (1/(N+1) for one node joining N equal ones).
func planTheory(cfg PlanConfig, before, after keys.Assignment) float64 {
	if cfg.Setup.Algo == "modulo" {
		return theory.ModuloMoved(len(before.Nodes), len(after.Nodes))
	}
	return theory.MovedShares(before.Nodes, after.Nodes)
}

func planAssign(cfg PlanConfig, ks *keys.Set) (before, after keys.Assignment, err error) {
	p, err := cfg.Setup.New(cfg.Before)
	if err != nil {
		return before, after, err
	}
	if before, err = keys.Assign(p, ks); err != nil {
		return before, after, err
	}
	if len(cfg.Add) > 0 {
		if err := p.Add(cfg.Add...); err != nil {
			return before, after, fmt.Errorf("add: %w", err)
		}
	}
	if len(cfg.Remove) > 0 {
		if err := p.Remove(cfg.Remove...); err != nil {
			return before, after, fmt.Errorf("remove: %w", err)
		}
	}
	for _, r := range cfg.Reweight {
		if err := p.Reweight(r.ID, r.Weight); err != nil {
			return before, after, fmt.Errorf("reweight: %w", err)
		}
	}
	after, err = keys.Assign(p, ks)
	return before, after, err
}

func planLoads(before, after keys.Assignment, ks *keys.Set, sends, recv []float64) []Load {
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

// maxFlowRows bounds the flows a table lists; JSON carries them all.
const maxFlowRows = 30

// Tables renders the plan as tables in format f.
func (r *PlanResult) Tables(f report.Format) []report.Table {
	sum := report.Table{Title: fmt.Sprintf("plan: %s, %d -> %d nodes, %d keys", r.Setup, r.Before, r.After, r.Keys),
		Columns: []string{"measure", "measured", "theory"}}
	if f == report.Raw {
		sum.Add("keys moved", strconv.Itoa(r.Moved), f.Plain(r.TheoryShare*float64(r.Keys)))
		sum.Add("share of keys moved", f.Plain(r.MovedShare), f.Plain(r.TheoryShare))
	} else {
		sum.Add("keys moved", fmt.Sprintf("%d (%s)", r.Moved, f.Pct(r.MovedShare, 2)), f.Pct(r.TheoryShare, 2))
	}
	sum.Add("bytes moved", f.Bytes(r.MovedBytes), f.Bytes(r.TheoryShare*r.TotalBytes))
	sum.Add("bytes sent per old node", f.Bytes(r.MovedBytes/float64(max(r.Before, 1))), f.Bytes(r.TheoryShare*r.TotalBytes/float64(max(r.Before, 1))))
	sum.Add("requests to moved keys", f.Pct(r.MovedRequests, 2), f.Pct(r.TheoryShare, 2))
	if k := r.Cache; k != nil {
		sum.Add("database RPS, steady", f.Num(k.SteadyDB, 0), f.Num(k.SteadyDB, 0))
		sum.Add("database RPS, right after", f.Num(k.DB, 0), f.Num(k.TheoryDB, 0))
		sum.Add("factor over steady", f.Num(k.Factor, 1)+f.Unit("x"), f.Num(k.TheoryFac, 1)+f.Unit("x"))
	}
	flows := report.Table{Title: "moves: donor -> receiver, largest first", Columns: []string{"from", "to", "keys", "bytes", "requests"}}
	for i, x := range r.Flows {
		if i == maxFlowRows && f != report.Raw {
			flows.Add(fmt.Sprintf("(%d more)", len(r.Flows)-i), "", "", "", "")
			break
		}
		flows.Add(x.From, x.To, strconv.Itoa(x.Keys), f.Bytes(x.Bytes), f.Pct(x.Requests, 2))
	}
	loads := report.Table{Title: "per node: keys, bytes and request share before -> after; bytes sent and received",
		Columns: []string{"node", "keys before", "keys after", "bytes before", "bytes after", "req before", "req after", "sends", "receives"}}
	for _, x := range r.Loads {
		loads.Add(x.Node, strconv.Itoa(x.KeysBefore), strconv.Itoa(x.KeysAfter), f.Bytes(x.BytesBefore), f.Bytes(x.BytesAfter),
			f.Pct(x.ShareBefore, 2), f.Pct(x.ShareAfter, 2), f.Bytes(x.Sends), f.Bytes(x.Receives))
	}
	return []report.Table{sum, flows, loads}
}
