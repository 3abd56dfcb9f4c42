package proxy

import (
	"fmt"
	"strings"
	"time"

	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// Traffic configures a pool's sample of its traffic (traffic): the keys
// it serves most, by requests and by bytes, and the recent requests of a
// share of its keys, which the admin endpoint shows and hands out as a
// trace that `kolco plan --trace` reads (see pool_traffic.go). With it, a
// change of the pool's servers is predicted from the sample when it is
// applied and measured for a window after (see pool_traffic_change.go).
// Off by default: the sample holds key names, which the admin endpoint
// then shows to whoever may read it.
type Traffic struct {
	// Enabled (enabled) turns the sample on.
	Enabled bool `yaml:"enabled"`
	// Requests (requests) is the most requests the trace holds, the
	// latest: about 100 bytes each with keys of up to 32 bytes. Default
	// 65536; at most 4194304.
	Requests int `yaml:"requests"`
	// KeyShare (key_share) is the share of the keys whose requests are
	// traced, each key with all its requests or none (a spatially hashed
	// sample, as SHARDS samples), in (0, 1]. Default 1: every key.
	KeyShare float64 `yaml:"key_share"`
	// TopKeys (top_keys) is how many of the hottest keys are followed, by
	// requests and by bytes. Default 32; at most 1024.
	TopKeys int `yaml:"top_keys"`
	// Window (window), in milliseconds, is how long after a change the
	// pool measures what it costs, beside what the sample predicted.
	// Default 60000.
	Window int `yaml:"window"`
}

// The traffic sample's bounds.
const (
	maxTrafficRequests = 1 << 22
	maxTrafficTopKeys  = 1024
)

// trafficDefaults are a sample's settings that set none: the trace's
// 65536 requests cost about 6 MiB and span a minute of 1000 requests a
// second; 32 hot keys fill a screen; a minute after a change is when most
// of the misses it adds to a Zipf workload have come.
var trafficDefaults = Traffic{Requests: 65536, KeyShare: 1, TopKeys: 32, Window: 60000}

// window returns the measured window after a change.
func (t Traffic) window() time.Duration { return time.Duration(t.Window) * time.Millisecond }

// check checks traffic, the setting of pool p: its bounds, and the
// pools whose keys have no one server for the sample to follow.
func (t Traffic) check(p *PoolConfig, bad badSetting) error {
	switch {
	case t.Requests < 0 || t.Requests > maxTrafficRequests:
		return bad("traffic.requests", "want 1 to %d (got %d)", maxTrafficRequests, t.Requests)
	case !(t.KeyShare >= 0 && t.KeyShare <= 1): // NaN too
		return bad("traffic.key_share", "want a share of the keys in (0, 1] (got %v)", t.KeyShare)
	case t.TopKeys < 0 || t.TopKeys > maxTrafficTopKeys:
		return bad("traffic.top_keys", "want 1 to %d (got %d)", maxTrafficTopKeys, t.TopKeys)
	case t.Window < 0:
		return bad("traffic.window", "must not be negative (got %d)", t.Window)
	case !t.Enabled:
		return nil
	case p.Distribution == twemproxy.Random:
		return bad("traffic.enabled", "random sends each request to any live server, so a key has no server for the sample's hot keys per server or a change's prediction to follow; use ketama")
	case p.Replicas > 1:
		return bad("traffic.enabled", "the sample's prediction of a change follows one copy of each key; with replicas it does not apply")
	}
	return nil
}

// explain writes what the pool samples of its traffic.
func (t Traffic) explain(b *strings.Builder) {
	if !t.Enabled {
		fmt.Fprintf(b, "  traffic: not sampled (traffic.enabled)\n")
		return
	}
	fmt.Fprintf(b, "  traffic: sampled: the %d hottest keys by requests and by bytes, and the latest %d requests of a share %g of the keys, "+
		"in /v1/pools and at /v1/pools/{pool}/trace; a change is predicted from them and measured for %d ms after\n",
		t.TopKeys, t.Requests, t.KeyShare, t.Window)
}
