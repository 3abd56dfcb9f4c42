package gossip

import (
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/kolco-dev/kolco/membership"
)

// The failure detector's defaults, [Config]'s zero values: memberlist's
// for a LAN (memberlist.DefaultLANConfig), which Consul's LAN pools run
// on. Every member of a pool should have the same: a member declares
// another dead by its own timers, and tells the others, who take its word.
const (
	// DefaultProbeInterval: each member probes one other member, in turn,
	// once a second, so a member that stops is suspected within about a
	// second.
	DefaultProbeInterval = time.Second
	// DefaultProbeTimeout: a probe's ack is awaited half a second before
	// other members are asked to probe too (the rest of the interval).
	DefaultProbeTimeout = 500 * time.Millisecond
	// DefaultGossipInterval: news (a join, a suspicion, a refutation)
	// goes to three members every 200 ms.
	DefaultGossipInterval = 200 * time.Millisecond
	// DefaultSuspicionMult: a suspect has at least 4 probe intervals (4 s)
	// to refute the suspicion - more in a pool of 10 members or more, and
	// up to 6 times that until other members confirm it - before it is
	// declared dead.
	DefaultSuspicionMult = 4
)

// Config says how a member joins the gossip pool and what it tells the
// others. Zero values mean the documented defaults: memberlist's for a
// LAN (memberlist.DefaultLANConfig), which Consul and Grafana's rings run
// on.
type Config struct {
	// Name is the member's unique name in the pool. For a node it must be
	// the node's ID (and defaults to it): a name is held by one live
	// member at a time, so two sidecars cannot both claim a node. For an
	// observer the default is "observer@" and the advertised address.
	Name string
	// Bind is the "host:port" the member listens on, UDP and TCP.
	// Required; port 0 picks a free port (see [Pool.Addr]).
	Bind string
	// Advertise is the "host:port" the others reach the member at, when
	// it is not Bind (behind NAT, or Bind on 0.0.0.0).
	Advertise string
	// Seeds are the "host:port" of members to join through; one that
	// answers is enough. None means this member starts a pool. Until one
	// answers the pool retries them every RejoinInterval, and again
	// whenever it finds itself alone.
	Seeds []string
	// Keys encrypt the gossip (AES-GCM, memberlist's keyring): the first
	// encrypts, every one decrypts. Each 16, 24 or 32 bytes. None means
	// no encryption: only on a network no one else reaches.
	Keys [][]byte
	// Label keeps pools apart that share a network: members with another
	// label are refused. Default none.
	Label string
	// Meta is what the member tells the others: RoleNode with its node,
	// or RoleObserver (the zero Meta means an observer).
	Meta Meta

	// ProbeInterval is how often a member probes another. Default
	// DefaultProbeInterval (1s). Every member of a pool should have the
	// same failure detector: see the constants.
	ProbeInterval time.Duration
	// ProbeTimeout is how long a probe waits for an ack before other
	// members are asked to probe too. Default DefaultProbeTimeout (500ms).
	ProbeTimeout time.Duration
	// GossipInterval is how often a member gossips. Default
	// DefaultGossipInterval (200ms).
	GossipInterval time.Duration
	// SuspicionMult multiplies the probe interval into the time a
	// suspect has to refute the suspicion before it is declared dead.
	// Default DefaultSuspicionMult (4).
	SuspicionMult int
	// RejoinInterval is how often the seeds are tried while the member is
	// alone. Default 1s.
	RejoinInterval time.Duration
	// LeaveTimeout bounds the graceful leave of [Pool.Close]. Default 2s.
	LeaveTimeout time.Duration
	// Log receives memberlist's log lines; nil discards them.
	Log io.Writer

	// noPushPull turns memberlist's periodic exchange of the whole state
	// off, for tests of what the gossip alone delivers.
	noPushPull bool
	// transport, for tests, wraps memberlist's network transport (bound
	// to Bind, which must name a port) to lose what a test says.
	transport func(memberlist.NodeAwareTransport) memberlist.NodeAwareTransport
}

func (c *Config) rejoin() time.Duration { return or(c.RejoinInterval, time.Second) }
func (c *Config) leave() time.Duration  { return or(c.LeaveTimeout, 2*time.Second) }

func or(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// FailureTimeout returns the failure detector's bounds for a pool of n
// members: a member that stops answering is declared dead between lo and
// hi after it is first suspected (memberlist shortens the wait as other
// members confirm the suspicion), and is suspected within about a probe
// round of stopping.
func (c *Config) FailureTimeout(n int) (lo, hi time.Duration) {
	mc := c.memberlist()
	scale := 1.0
	if n > 1 {
		scale = max(1, math.Log10(float64(n)))
	}
	lo = time.Duration(float64(mc.SuspicionMult) * scale * float64(mc.ProbeInterval))
	return lo, lo * time.Duration(mc.SuspicionMaxTimeoutMult)
}

// check validates the configuration; the error wraps
// [membership.ErrBadConfig].
func (c *Config) check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: gossip: %s", membership.ErrBadConfig, fmt.Sprintf(format, args...))
	}
	if _, _, err := splitAddr(c.Bind); err != nil {
		return bad("bind %q: %v", c.Bind, err)
	}
	if c.Advertise != "" {
		if _, _, err := splitAddr(c.Advertise); err != nil {
			return bad("advertise %q: %v", c.Advertise, err)
		}
	}
	for _, s := range c.Seeds {
		if _, _, err := net.SplitHostPort(s); err != nil {
			return bad("seed %q: %v", s, err)
		}
	}
	for i, k := range c.Keys {
		if err := checkKey(k); err != nil {
			return bad("key %d: %v", i+1, err)
		}
	}
	if len(c.Label) > 255 {
		return bad("a label of %d bytes: at most 255", len(c.Label))
	}
	m := c.meta()
	if err := m.Check(); err != nil {
		return bad("%v", err)
	}
	if _, err := EncodeMeta(m); err != nil {
		return bad("%v", err)
	}
	if m.Role == RoleNode && c.Name != "" && c.Name != m.Node.ID {
		return bad("member %q: %v (%q)", c.Name, errNotNode, m.Node.ID)
	}
	if c.ProbeInterval < 0 || c.ProbeTimeout < 0 || c.GossipInterval < 0 || c.SuspicionMult < 0 ||
		c.RejoinInterval < 0 || c.LeaveTimeout < 0 {
		return bad("durations and suspicion_mult must not be negative")
	}
	return nil
}

// meta returns the metadata the member carries: the zero Meta is an
// observer's.
func (c *Config) meta() Meta {
	if c.Meta.Role == "" && c.Meta == (Meta{}) {
		return Meta{Role: RoleObserver}
	}
	return c.Meta
}

// splitAddr parses "host:port" with a numeric port.
func splitAddr(s string) (string, int, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, err
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return "", 0, fmt.Errorf("port %q", port)
	}
	return host, p, nil
}

// memberlist returns memberlist's configuration for c, without the
// delegates: LAN defaults with c's tuning over them.
func (c *Config) memberlist() *memberlist.Config {
	mc := memberlist.DefaultLANConfig()
	if c.ProbeInterval > 0 {
		mc.ProbeInterval = c.ProbeInterval
	}
	if c.ProbeTimeout > 0 {
		mc.ProbeTimeout = c.ProbeTimeout
	}
	if c.GossipInterval > 0 {
		mc.GossipInterval = c.GossipInterval
	}
	if c.SuspicionMult > 0 {
		mc.SuspicionMult = c.SuspicionMult
	}
	// A sidecar restarted on another port takes its node's name back as
	// soon as the old member is dead. memberlist's default (0) never lets
	// it, and a wait of a probe interval lost the restarted member's alive
	// messages on a member that had only just learnt of the death (a
	// fleet test caught it after a pause): they are sent a few times, and
	// the next full exchange of state is 30 s away. A name is one node's:
	// two live claimants are an operator's mistake that memberlist still
	// reports as a conflict.
	mc.DeadNodeReclaimTime = time.Nanosecond
	if c.noPushPull {
		mc.PushPullInterval = 0
	}
	mc.Label = c.Label
	mc.LogOutput = c.Log
	if mc.LogOutput == nil {
		mc.LogOutput = io.Discard
	}
	return mc
}

// seeds returns the seeds other than the member's own addresses.
func (c *Config) seeds(self ...string) []string {
	return slices.DeleteFunc(slices.Clone(c.Seeds), func(s string) bool { return slices.Contains(self, s) })
}
