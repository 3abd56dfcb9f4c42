package sim

import (
	"fmt"
	"strconv"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/report"
)

// LookupConfig sets up the lookup experiment: the time of one Locate for
// each setup and node count, over Keys keys looked up on one goroutine.
// It measures this machine's speed; it is a report, not a property.
type LookupConfig struct {
	// Setups are the contenders.
	Setups []Setup
	// Nodes are the node counts to time.
	Nodes []int
	// Keys is the number of lookups per measurement.
	Keys int
}

// LookupResult is the lookup experiment's outcome.
type LookupResult struct {
	// Keys echoes the configuration.
	Keys int `json:"keys"`
	// Rows hold one entry per setup and node count.
	Rows []LookupStat `json:"rows"`
}

// LookupStat is one setup at one node count.
type LookupStat struct {
	// Setup is the setup's label and Nodes the node count.
	Setup string `json:"setup"`
	Nodes int    `json:"nodes"`
	// Ns is the mean time of one Locate, in nanoseconds.
	Ns float64 `json:"ns_per_lookup"`
	// BuildMs is the time to build the placement, in milliseconds.
	BuildMs float64 `json:"build_ms"`
}

// Lookup runs the lookup experiment.
func Lookup(cfg LookupConfig) (*LookupResult, error) {
	if cfg.Keys < 1 {
		return nil, fmt.Errorf("%w: lookup needs keys >= 1", kolco.ErrBadConfig)
	}
	names := make([]string, cfg.Keys)
	ks := keys.Synthetic(cfg.Keys)
	for i := range names {
		names[i] = ks.Key(i)
	}
	res := &LookupResult{Keys: cfg.Keys}
	for _, s := range cfg.Setups {
		for _, n := range cfg.Nodes {
			t0 := time.Now()
			p, err := s.New(nodeNames("node", n))
			if err != nil {
				return nil, s.wrap(err)
			}
			build := time.Since(t0)
			t0 = time.Now()
			for _, k := range names {
				if _, err := p.Locate(k); err != nil {
					return nil, err
				}
			}
			el := time.Since(t0)
			res.Rows = append(res.Rows, LookupStat{Setup: s.Label(), Nodes: n,
				Ns: float64(el.Nanoseconds()) / float64(cfg.Keys), BuildMs: float64(build.Microseconds()) / 1000})
		}
	}
	return res, nil
}

// Tables renders the result as tables in format f.
func (r *LookupResult) Tables(f report.Format) []report.Table {
	t := report.Table{
		Title:   fmt.Sprintf("lookup: time per Locate over %s on one goroutine (this machine)", report.Count(r.Keys, "key", "keys")),
		Columns: []string{"setup", "nodes", "ns/lookup", "build ms"},
	}
	for _, x := range r.Rows {
		t.Add(x.Setup, strconv.Itoa(x.Nodes), f.Num(x.Ns, 1), f.Num(x.BuildMs, 2))
	}
	return []report.Table{t}
}
