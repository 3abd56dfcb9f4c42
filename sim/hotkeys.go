package sim

import (
	"fmt"
	"math"
	"strconv"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/bounded"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/report"
	"github.com/kolco-dev/kolco/sim/workload"
)

// HotkeysConfig sets up the hotkeys experiment: a stream of Requests
// requests whose keys follow a Zipf law of exponent Zipf over Keys keys
// ("key:0" the hottest), with InFlight requests open at a time (each
// request ends when InFlight newer ones have started). Each setup places
// every request on its key's owner; the bounded-loads ring (Mirrokni,
// Thorup and Zadimoghaddam, SODA 2018; arXiv 2016) places it live with Acquire and Release,
// no node holding more than ceil((1+Epsilon) * open requests / N).
type HotkeysConfig struct {
	// Setups are the plain placements to compare with the bounded ring.
	Setups []Setup
	// Nodes is the node count and Keys the number of distinct keys.
	Nodes int
	Keys  int
	// Zipf is the exponent s: rank i is requested in proportion to 1/i^s.
	Zipf float64
	// Requests is the length of the stream; InFlight the requests open
	// at a time.
	Requests int
	InFlight int
	// Epsilon and Points configure the bounded ring (zero: its defaults);
	// Hash is its key hash (nil: xxh3).
	Epsilon float64
	Points  int
	Hash    keyhash.Func
	// Seed selects the request stream.
	Seed uint64
	// Progress, if not nil, is told of each finished placement.
	Progress Progress
}

// HotkeysResult is the hotkeys experiment's outcome.
type HotkeysResult struct {
	// Nodes, Keys, Zipf, Requests and InFlight echo the configuration.
	Nodes    int     `json:"nodes"`
	Keys     int     `json:"keys"`
	Zipf     float64 `json:"zipf"`
	Requests int     `json:"requests"`
	InFlight int     `json:"in_flight"`
	// HotShare is the hottest key's share of the requests.
	HotShare float64      `json:"hot_key_share"`
	Rows     []HotkeyStat `json:"rows"`
	// Loads holds each node's share of the requests, per row.
	Loads []RequestLoads `json:"loads"`
}

// RequestLoads is each node's share of the requests of one placement.
type RequestLoads struct {
	// Setup is the placement's label; Shares[i] is the share of the
	// requests node Nodes[i] served.
	Setup  string    `json:"setup"`
	Nodes  []string  `json:"nodes"`
	Shares []float64 `json:"shares"`
}

// HotkeyStat is one placement of the request stream.
type HotkeyStat struct {
	// Setup is the placement's label.
	Setup string `json:"setup"`
	// MaxAvg and Spread describe the nodes' shares of all requests.
	MaxAvg float64 `json:"max_avg"`
	Spread float64 `json:"spread"`
	// Peak is the most requests any node held open at once; Bound is the
	// bounded ring's capacity at a full window (0 for the others).
	Peak  int `json:"peak_in_flight"`
	Bound int `json:"bound,omitempty"`
	// HotKeyNodes is the number of distinct nodes the hottest key's
	// requests went to (1 for a plain placement).
	HotKeyNodes int `json:"hot_key_nodes"`
}

// Hotkeys runs the hotkeys experiment.
func Hotkeys(cfg HotkeysConfig) (*HotkeysResult, error) {
	if cfg.Nodes < 1 || cfg.Keys < 1 || cfg.Requests < 1 || cfg.InFlight < 1 || !(cfg.Zipf >= 0) || math.IsInf(cfg.Zipf, 0) {
		return nil, fmt.Errorf("%w: hotkeys needs nodes, keys, requests and in-flight >= 1 and a finite zipf exponent >= 0", kolco.ErrBadConfig)
	}
	probs := workload.ZipfWeights(cfg.Keys, cfg.Zipf)
	stream := workload.Stream(probs, cfg.Requests, cfg.Seed)
	ks := keys.Synthetic(cfg.Keys)
	nodes := nodeNames("node", cfg.Nodes)
	res := &HotkeysResult{Nodes: cfg.Nodes, Keys: cfg.Keys, Zipf: cfg.Zipf, Requests: cfg.Requests, InFlight: cfg.InFlight, HotShare: probs[0]}
	total := len(cfg.Setups) + 1
	for i, s := range cfg.Setups {
		p, err := s.New(nodes)
		if err != nil {
			return nil, s.wrap(err)
		}
		a, err := keys.Assign(p, ks)
		if err != nil {
			return nil, err
		}
		st, loads := replay(s.Label(), a.Nodes, stream, cfg.InFlight, func(k int32) (int32, func()) { return a.Owner[k], nil })
		res.Rows, res.Loads = append(res.Rows, st), append(res.Loads, loads)
		cfg.Progress.step(i+1, total, "hotkeys")
	}
	b, err := bounded.New(nodes, bounded.Config{Epsilon: cfg.Epsilon, VNodes: cfg.Points, Hash: cfg.Hash})
	if err != nil {
		return nil, fmt.Errorf("bounded: %w", err)
	}
	bn := b.Nodes()
	index := map[string]int32{}
	for i, n := range bn {
		index[n.ID] = int32(i)
	}
	var acqErr error
	label := "bounded(eps=" + strconv.FormatFloat(b.Epsilon(), 'g', -1, 64) + ")"
	st, loads := replay(label, bn, stream, cfg.InFlight, func(k int32) (int32, func()) {
		l, err := b.Acquire(ks.Key(int(k)))
		if err != nil {
			acqErr = err
			return 0, nil
		}
		return index[l.Node.ID], l.Release
	})
	if acqErr != nil {
		return nil, acqErr
	}
	st.Bound = int(math.Ceil((1 + b.Epsilon()) * float64(cfg.InFlight) / float64(cfg.Nodes)))
	res.Rows, res.Loads = append(res.Rows, st), append(res.Loads, loads)
	cfg.Progress.step(total, total, "hotkeys")
	return res, nil
}

// replay runs the stream with a window of inFlight open requests: place
// returns a request's node and, for live placements, its release.
func replay(label string, nodes []kolco.Node, stream []int32, inFlight int, place func(k int32) (int32, func())) (HotkeyStat, RequestLoads) {
	count := make([]int, len(nodes))
	open := make([]int, len(nodes))
	type req struct {
		node    int32
		release func()
	}
	window := make([]req, 0, inFlight)
	head, peak := 0, 0
	hot := map[int32]bool{}
	for _, k := range stream {
		if len(window) == inFlight {
			old := window[head]
			open[old.node]--
			if old.release != nil {
				old.release()
			}
		}
		n, rel := place(k)
		count[n]++
		open[n]++
		peak = max(peak, open[n])
		if k == 0 {
			hot[n] = true
		}
		if len(window) < inFlight {
			window = append(window, req{n, rel})
		} else {
			window[head] = req{n, rel}
			head = (head + 1) % inFlight
		}
	}
	for _, r := range window {
		if r.release != nil {
			r.release()
		}
	}
	st := HotkeyStat{Setup: label, Peak: peak, HotKeyNodes: len(hot)}
	st.MaxAvg, _, st.Spread = shareStats(count)
	rl := RequestLoads{Setup: label}
	for i, n := range nodes {
		rl.Nodes = append(rl.Nodes, n.ID)
		rl.Shares = append(rl.Shares, float64(count[i])/float64(len(stream)))
	}
	return st, rl
}

// Tables renders the result as tables in format f.
func (r *HotkeysResult) Tables(f report.Format) []report.Table {
	t := report.Table{
		Title: fmt.Sprintf("hotkeys: %s, Zipf s=%g over %s (hottest %s), %d open at a time, %s",
			report.Count(r.Requests, "request", "requests"), r.Zipf, report.Count(r.Keys, "key", "keys"), f.Pct(r.HotShare, 1),
			r.InFlight, report.Count(r.Nodes, "node", "nodes")),
		Columns: []string{"placement", "max/avg requests", "spread", "peak open on a node", "bound", "nodes serving the hottest key"},
	}
	for _, x := range r.Rows {
		bound := "-"
		if x.Bound > 0 {
			bound = strconv.Itoa(x.Bound)
		}
		t.Add(x.Setup, f.Num(x.MaxAvg, 2), f.Pct(x.Spread, 1), strconv.Itoa(x.Peak), bound, strconv.Itoa(x.HotKeyNodes))
	}
	return []report.Table{t}
}
