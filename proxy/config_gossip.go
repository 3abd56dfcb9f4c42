package proxy

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/membership/gossip"
)

// GossipMembership follows a gossip pool (package membership/gossip): the
// proxy joins it as an observer, which is never placed, and serves the
// node members that sidecars beside the cache servers register ("kolco
// members register --gossip"). Distributions whose placement depends on
// the order of changes (jump, jumpback, anchor, slots, ...) are refused:
// gossip gives each member its own order.
type GossipMembership struct {
	// Bind is the "host:port" the proxy gossips on, UDP and TCP.
	// Required.
	Bind string `yaml:"bind"`
	// Advertise is the "host:port" the other members reach the proxy at,
	// when it is not Bind.
	Advertise string `yaml:"advertise"`
	// Seeds are members to join through ("host:port"); one that answers
	// is enough.
	Seeds []string `yaml:"seeds"`
	// KeyFile holds the keys that encrypt the gossip, base64, one a line,
	// the one in use first (see gossip.ParseKeys). Without it the
	// gossip is in the clear.
	KeyFile string `yaml:"key_file"`
	// Name is the proxy's name in the pool; default "observer@" and the
	// advertised address.
	Name string `yaml:"name"`
	// Label keeps pools apart that share a network.
	Label string `yaml:"label"`
	// ProbeInterval (probe_interval), ProbeTimeout (probe_timeout) and
	// GossipInterval (gossip_interval) tune the failure detector and the
	// gossip, with SuspicionMult (suspicion_mult): a member that stops
	// answering is dead suspicion_mult probe intervals or more after it
	// is suspected. Defaults: memberlist's for a LAN, 1 s, 500 ms, 200 ms
	// and 4 (gossip.DefaultProbeInterval, ...), which held on a busy
	// machine where 100 ms probes found live members dead; every member
	// of the pool should have the same.
	ProbeInterval  time.Duration `yaml:"-"`
	ProbeTimeout   time.Duration `yaml:"-"`
	GossipInterval time.Duration `yaml:"-"`
	SuspicionMult  int           `yaml:"suspicion_mult"`
}

// gossipFile is GossipMembership as the file writes it, durations in
// milliseconds.
type gossipFile struct {
	GossipMembership `yaml:",inline"`
	ProbeInterval    int `yaml:"probe_interval"`
	ProbeTimeout     int `yaml:"probe_timeout"`
	GossipInterval   int `yaml:"gossip_interval"`
}

// decode sets g from the file's form.
func (f *gossipFile) decode() (*GossipMembership, error) {
	g := f.GossipMembership
	var err error
	for _, d := range []struct {
		dst *time.Duration
		ms  int
	}{{&g.ProbeInterval, f.ProbeInterval}, {&g.ProbeTimeout, f.ProbeTimeout}, {&g.GossipInterval, f.GossipInterval}} {
		if err == nil {
			*d.dst, err = millis(d.ms)
		}
	}
	return &g, err
}

func (g *GossipMembership) String() string {
	if len(g.Seeds) == 0 {
		return "gossip at " + g.Bind
	}
	return fmt.Sprintf("gossip at %s, seeds %s", g.Bind, strings.Join(g.Seeds, ","))
}

// check checks the gossip settings for a pool placed by distribution.
func (g *GossipMembership) check(distribution string) error {
	if info, ok := algo.Lookup(distribution); ok && info.HistoryDependent {
		return fmt.Errorf("gossip: distribution %s is history-dependent: its placement depends on the order of changes, and gossip gives each member its own order; use ring, rendezvous, maglev or ketama, or etcd membership", info.Name)
	}
	if g.Bind == "" {
		return errors.New("gossip: no bind address (host:port)")
	}
	for _, a := range append([]string{g.Bind, g.Advertise}, g.Seeds...) {
		if a == "" { // no advertise address: Bind, checked above, is advertised
			continue
		}
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("gossip: %q: %w", a, err)
		}
	}
	if g.ProbeInterval < 0 || g.ProbeTimeout < 0 || g.GossipInterval < 0 || g.SuspicionMult < 0 {
		return errors.New("gossip: probe_interval, probe_timeout, gossip_interval and suspicion_mult must not be negative")
	}
	return nil
}

// explain says how the proxy takes part in the gossip pool, for --check.
func (g *GossipMembership) explain(b *strings.Builder) {
	cfg := gossip.Config{ProbeInterval: g.ProbeInterval, SuspicionMult: g.SuspicionMult}
	lo, hi := cfg.FailureTimeout(1)
	enc := "in the clear"
	if g.KeyFile != "" {
		enc = "encrypted with the keys of " + g.KeyFile
	}
	fmt.Fprintf(b, "  gossip: the proxy joins as an observer (never placed), %s; a member that stops answering is dropped %v..%v after it is suspected\n",
		enc, lo, hi)
}
