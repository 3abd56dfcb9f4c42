package plan

import (
	"fmt"
	"math"
	"slices"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/mrc"
	"github.com/kolco-dev/kolco/sim/trace"
)

// A plan from traffic weighs each key by the requests a trace shows for
// it, per second of the trace's span, rather than by its count: a change
// that moves the hot keys costs the database their reads, whatever the
// keys' number.
//
// Right after a change every read of a moved key misses until it is
// filled again; the database then sees the moved keys' reads per second
// (MovedReadRPS). That rate falls as the moved keys are read once and
// filled: the misses a change adds in its first w seconds are the moved
// keys that were cached when it came and are read within w. A key read c
// times in a trace of span D, read at an unknown rate r, is taken to be
// cached at the change when the trace read it (c >= 1) - the caches hold
// what the trace read - and, for t = w/D <= 1,
//
//	g(c) = 1 - (1-t)^c + (-t)^c
//
// has the expectation (1-exp(-rD))(1-exp(-rtD)) over the Poisson count c:
// cached, and read again within w. Summed over the moved keys it predicts
// the added misses without the bias of the plug-in 1-exp(-ctD/D), which
// counts every key read once in a long-tailed trace as likely to return
// (in TestTrafficPredictsReplayedMisses the plug-in overestimated the
// replayed misses by 9% and 43%, this sum came within 4%). It is the per-key form of Good and Toulmin's estimate of
// the species seen again, and is unbiased only for w up to the trace's
// span: what comes after the trace is not in it, so the window is bounded
// by the span.

// Traffic is the traffic a plan weighs keys by.
type Traffic struct {
	// Profile is the trace, summed up.
	Profile *trace.Profile
	// Window is how long after the change the plan counts the database's
	// misses, in seconds, at most the trace's span; zero means the span.
	Window float64
	// TopK is how many of each node's hottest keys after the change are
	// listed; zero means 5.
	TopK int
	// Memory gives each node's memory in bytes, by ID, for its miss-ratio
	// curve; the entry "" is every other node's. Nil leaves the curves
	// out.
	Memory map[string]float64
	// Policy is the nodes' eviction, for the curves.
	Policy mrc.Policy
	// Footprint is an item's bytes in a node's memory, for the curves;
	// nil means mrc.MemcachedFootprint for the Memcached policy and
	// mrc.PlainFootprint for LRU.
	Footprint mrc.Footprint
}

// TrafficImpact is what a change costs by the traffic of a trace.
type TrafficImpact struct {
	// Seconds is the trace's span; Requests and Reads its requests and
	// reads, RPS and ReadRPS the same per second.
	Seconds  float64 `json:"trace_seconds"`
	Requests int64   `json:"requests"`
	Reads    int64   `json:"reads"`
	RPS      float64 `json:"rps"`
	ReadRPS  float64 `json:"read_rps"`
	// Lost counts the requests the capture says it dropped.
	Lost int64 `json:"lost_requests,omitempty"`
	// MovedRPS is the requests per second to the keys that move, and
	// MovedReadRPS their reads: with the change applied cold, or warm
	// from nodes that are down, the database's added load right after it,
	// before any moved key is filled again.
	MovedRPS     float64 `json:"moved_rps"`
	MovedReadRPS float64 `json:"moved_read_rps"`
	// MissRatio is the reads' steady miss ratio before the change, and
	// MissFrom where it comes from: "trace" (its hits and misses),
	// "curve" (the nodes' miss-ratio curves at their memory) or
	// "hit-rate" (the configured hit rate). MissRatioAfter is the same
	// after the change: the curves' difference added.
	MissRatio      float64 `json:"miss_ratio"`
	MissFrom       string  `json:"miss_ratio_from"`
	MissRatioAfter float64 `json:"miss_ratio_after"`
	// DBRPS is the database's steady reads per second before the change,
	// DBRPSRightAfter right after it, DBRPSAfter once the moved keys are
	// filled (the steady rate after).
	DBRPS           float64 `json:"db_rps"`
	DBRPSRightAfter float64 `json:"db_rps_right_after"`
	DBRPSAfter      float64 `json:"db_rps_after"`
	// Window is the span after the change over which Misses counts, in
	// seconds; Misses are the database's added misses within the first
	// Seconds of it, for a few spans up to Window.
	Window float64      `json:"window_seconds"`
	Misses []WindowMiss `json:"misses"`
	// Nodes are each node's traffic before and after.
	Nodes []NodeTraffic `json:"nodes"`
	// Curve is the pool's miss ratio against the nodes' memory, when
	// memory was given.
	Curve *PoolCurve `json:"curve,omitempty"`
}

// WindowMiss is the misses a change adds within a span after it.
type WindowMiss struct {
	// Seconds is the span; Misses the reads that miss within it because
	// of the change; RPS their mean rate over the span.
	Seconds float64 `json:"seconds"`
	Misses  float64 `json:"misses"`
	RPS     float64 `json:"rps"`
}

// NodeTraffic is one node's requests before and after the change.
type NodeTraffic struct {
	// Node is the node's ID; RPSBefore and RPSAfter its requests per
	// second, ReadRPSBefore and ReadRPSAfter its reads.
	Node          string  `json:"node"`
	RPSBefore     float64 `json:"rps_before"`
	RPSAfter      float64 `json:"rps_after"`
	ReadRPSBefore float64 `json:"read_rps_before"`
	ReadRPSAfter  float64 `json:"read_rps_after"`
	// Memory is the node's memory, when given; MissBefore and MissAfter
	// its miss ratio at that memory before and after (NaN, in JSON null,
	// for a node without reads; nil without memory, or for a node absent
	// before or after).
	Memory     float64    `json:"memory_bytes,omitempty"`
	MissBefore *jsonFloat `json:"miss_ratio_before,omitempty"`
	MissAfter  *jsonFloat `json:"miss_ratio_after,omitempty"`
	// Hot are the node's hottest keys after the change, hottest first.
	Hot []HotKey `json:"hot_keys"`
}

// HotKey is one hot key of a node.
type HotKey struct {
	// Key is the key, RPS its requests per second and Share its share of
	// its node's.
	Key   string  `json:"key"`
	RPS   float64 `json:"rps"`
	Share float64 `json:"share"`
}

// defaultTopK is the hot keys listed per node.
const defaultTopK = 5

// KeysOf returns a profile's keys as a plan's sample, in the profile's
// order: each key's size its key and last known value (a value the trace
// never showed counted at the mean of those it did), its rate its
// requests per second of the trace's span (per request for a trace of no
// span).
func KeysOf(p *trace.Profile) *keys.Set {
	names := make([]string, len(p.Keys))
	sizes := make([]float64, len(p.Keys))
	rates := make([]float64, len(p.Keys))
	known, sum := 0, 0.0
	for _, k := range p.Keys {
		if k.Size >= 0 {
			known++
			sum += float64(k.Size)
		}
	}
	mean := 0.0
	if known > 0 {
		mean = sum / float64(known)
	}
	per := 1.0
	if s := p.Seconds(); s > 0 {
		per = 1 / s
	}
	for i, k := range p.Keys {
		names[i], rates[i] = k.Key, float64(k.Requests)*per
		sizes[i] = float64(len(k.Key)) + mean
		if k.Size >= 0 {
			sizes[i] = float64(len(k.Key) + int(k.Size))
		}
	}
	ks := keys.List(names)
	ks.Sizes, ks.Rates = sizes, rates
	return ks
}

// check validates the traffic against the plan's other settings.
func (t *Traffic) check(cfg Config) error {
	p := t.Profile
	switch {
	case p == nil || p.Requests == 0:
		return fmt.Errorf("%w: traffic without a trace", kolco.ErrBadConfig)
	case cfg.Keys != nil && cfg.Keys.Len() != len(p.Keys):
		return fmt.Errorf("%w: the key sample of a plan from traffic is the trace's keys (plan.KeysOf)", kolco.ErrBadConfig)
	case p.Seconds() <= 0:
		return fmt.Errorf("%w: the trace spans no time (its requests bear one time): a plan from traffic needs its timing for request rates", kolco.ErrBadConfig)
	case !(t.Window >= 0) || t.Window > p.Seconds():
		return fmt.Errorf("%w: the window must be within the trace's span of %.3g s (got %v): what comes after the trace is not in it", kolco.ErrBadConfig, p.Seconds(), t.Window)
	case t.TopK < 0:
		return fmt.Errorf("%w: top %d keys", kolco.ErrBadConfig, t.TopK)
	case t.Memory != nil && p.Reads == 0:
		return fmt.Errorf("%w: the trace has no reads: a miss-ratio curve counts the reads that miss", kolco.ErrBadConfig)
	case cfg.RPS > 0:
		return fmt.Errorf("%w: a plan from traffic takes its request rate from the trace, not RPS", kolco.ErrBadConfig)
	}
	for id, m := range t.Memory {
		if !(m > 0) || math.IsInf(m, 0) {
			return fmt.Errorf("%w: memory of %q must be a finite number of bytes > 0 (got %v)", kolco.ErrBadConfig, id, m)
		}
	}
	return nil
}

// trafficImpact measures the change by the trace's traffic; the
// assignments place the profile's keys, in its order.
func trafficImpact(cfg Config, before, after keys.Assignment) (*TrafficImpact, error) {
	t := cfg.Traffic
	p := t.Profile
	secs := p.Seconds()
	ti := &TrafficImpact{Seconds: secs, Requests: p.Requests, Reads: p.Reads, RPS: float64(p.Requests) / secs,
		ReadRPS: float64(p.Reads) / secs, Lost: p.Stats.Lost, Window: t.Window}
	if ti.Window == 0 {
		ti.Window = secs
	}
	cold := make([]bool, len(p.Keys)) // moved, and their old node does not answer for them
	for i, o := range before.Owner {
		from, to := before.Nodes[o].ID, after.Nodes[after.Owner[i]].ID
		if from == to {
			continue
		}
		k := p.Keys[i]
		ti.MovedRPS += float64(k.Requests) / secs
		if !cfg.Warm || slices.Contains(cfg.Down, from) {
			cold[i] = true
			ti.MovedReadRPS += float64(k.Reads) / secs
		}
	}
	ti.Misses = windowMisses(p, cold, ti.Window)
	ti.Nodes = nodeTraffic(p, before, after, max(t.TopK, 0))
	if err := ti.missRatios(cfg, before, after); err != nil {
		return nil, err
	}
	return ti, nil
}

// windowMisses returns the misses the cold keys add within spans after the
// change up to window: round spans, and the window itself.
func windowMisses(p *trace.Profile, cold []bool, window float64) []WindowMiss {
	spans := []float64{}
	for _, s := range []float64{0.001, 0.01, 0.1, 1, 10, 60, 600, 3600, 86400} {
		if s < window*(1-1e-9) {
			spans = append(spans, s)
		}
	}
	spans = append(spans, window)
	out := make([]WindowMiss, len(spans))
	for j, s := range spans {
		t := s / p.Seconds()
		sum := 0.0
		for i, k := range p.Keys {
			if !cold[i] || k.Reads == 0 || k.Hits == 0 && k.Misses > 0 { // never cached: moving it costs nothing
				continue
			}
			c := float64(k.Reads)
			sum += 1 - math.Pow(1-t, c) + math.Pow(-t, c)
		}
		out[j] = WindowMiss{Seconds: s, Misses: max(sum, 0), RPS: max(sum, 0) / s}
	}
	return out
}

// nodeTraffic returns each node's requests before and after, and its
// hottest keys after: the nodes before in order, then those that join.
func nodeTraffic(p *trace.Profile, before, after keys.Assignment, topK int) []NodeTraffic {
	if topK == 0 {
		topK = defaultTopK
	}
	secs := p.Seconds()
	index := map[string]int{}
	var out []NodeTraffic
	node := func(id string) *NodeTraffic {
		i, ok := index[id]
		if !ok {
			i = len(out)
			index[id] = i
			out = append(out, NodeTraffic{Node: id})
		}
		return &out[i]
	}
	for _, a := range []keys.Assignment{before, after} { // every node first: node's pointers stay valid
		for _, n := range a.Nodes {
			node(n.ID)
		}
	}
	hot := make([][]int32, len(after.Nodes)) // each node's keys after, hottest first
	for i, k := range p.Keys {
		b, a := node(before.Nodes[before.Owner[i]].ID), node(after.Nodes[after.Owner[i]].ID)
		b.RPSBefore += float64(k.Requests) / secs
		b.ReadRPSBefore += float64(k.Reads) / secs
		a.RPSAfter += float64(k.Requests) / secs
		a.ReadRPSAfter += float64(k.Reads) / secs
		hot[after.Owner[i]] = topInsert(hot[after.Owner[i]], int32(i), topK, p)
	}
	for j, n := range after.Nodes {
		nt := node(n.ID)
		for _, i := range hot[j] {
			k := p.Keys[i]
			nt.Hot = append(nt.Hot, HotKey{Key: k.Key, RPS: float64(k.Requests) / secs, Share: float64(k.Requests) / secs / nt.RPSAfter})
		}
	}
	return out
}

// topInsert adds key i to top, the k most requested keys hottest first,
// ties broken by the order of the trace.
func topInsert(top []int32, i int32, k int, p *trace.Profile) []int32 {
	r := p.Keys[i].Requests
	if len(top) == k && p.Keys[top[k-1]].Requests >= r {
		return top
	}
	at, _ := slices.BinarySearchFunc(top, r, func(j int32, r int64) int {
		if p.Keys[j].Requests >= r {
			return -1
		}
		return 1
	})
	top = slices.Insert(top, at, i)
	if len(top) > k {
		top = top[:k]
	}
	return top
}
