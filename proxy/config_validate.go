package proxy

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/compat/twemproxy"
	"github.com/kolco-dev/kolco/fleet"
	"github.com/kolco-dev/kolco/keyhash"
)

// twemproxyHashes are the hash names nutcracker 0.5.0 accepts.
var twemproxyHashes = []string{"one_at_a_time", "md5", "crc16", "crc32", "crc32a",
	"fnv1_64", "fnv1a_64", "fnv1_32", "fnv1a_32", "hsieh", "murmur", "jenkins"}

// Validate checks every pool and the proxy-wide settings, and that no two
// pools listen on the same address. It reads a setting left at its zero
// value as its default, and changes nothing. The error is a
// [*ConfigError] that names the pool and the key at fault.
func (c *Config) Validate() error {
	if len(c.Pools) == 0 {
		return &ConfigError{Err: errors.New("no pools")}
	}
	if err := c.Global.Validate(); err != nil {
		return err
	}
	listens, gossips := map[string]string{}, map[string]string{}
	for _, name := range c.PoolNames() {
		p := c.Pools[name]
		if err := p.validate(name); err != nil {
			return err
		}
		l, err := parseListen(p.WithDefaults().Listen)
		if err != nil {
			return &ConfigError{Pool: name, Key: "listen", Err: err}
		}
		if other, dup := listens[l.addr]; dup {
			return &ConfigError{Pool: name, Key: "listen", Err: fmt.Errorf("pools %q and %q both listen on %s", other, name, l.addr)}
		}
		listens[l.addr] = name
		if m := p.Membership; m != nil && m.Gossip != nil {
			if other, dup := gossips[m.Gossip.Bind]; dup {
				return &ConfigError{Pool: name, Key: "membership", Err: fmt.Errorf("pools %q and %q both gossip on %s: a member each, on an address each", other, name, m.Gossip.Bind)}
			}
			gossips[m.Gossip.Bind] = name
		}
	}
	return nil
}

// Validate checks the proxy-wide settings as [Config.Validate] does.
func (g *GlobalConfig) Validate() error {
	bad := func(key, format string, args ...any) error {
		return &ConfigError{Key: GlobalKey + "." + key, Err: fmt.Errorf(format, args...)}
	}
	switch strings.ToLower(g.LogLevel) {
	case "", "debug", "info", "warn", "error":
	default:
		return bad("log_level", "%q: want debug, info, warn or error", g.LogLevel)
	}
	for key, addr := range map[string]string{"metrics_listen": g.MetricsListen, "stats_listen": g.StatsListen, "admin_listen": g.AdminListen} {
		if addr == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return bad(key, "%w", err)
		}
	}
	if g.AdminTokenFile != "" && g.AdminListen == "" && g.MetricsListen == "" {
		return bad("admin_token_file", "given without admin_listen or metrics_listen, the endpoints that ask for it")
	}
	if err := checkPeers(g); err != nil {
		return bad("admin_peers", "%w", err)
	}
	if t := g.AdminTLS; t != nil && (t.CertFile == "" || t.KeyFile == "") {
		return bad("admin_tls", "serving https needs cert_file and key_file")
	}
	if g.AdminTLS != nil && g.AdminListen == "" && g.MetricsListen == "" {
		return bad("admin_tls", "given without admin_listen or metrics_listen, the endpoints it serves")
	}
	if g.StatsTLS && (g.AdminTLS == nil || g.StatsListen == "") {
		return bad("stats_tls", "the stats port serves TLS with admin_tls's files: give admin_tls and stats_listen")
	}
	if g.StatsInterval < 0 {
		return bad("stats_interval", "must not be negative (got %v)", g.StatsInterval)
	}
	if g.ShutdownTimeout < 0 {
		return bad("shutdown_timeout", "must not be negative (got %v)", g.ShutdownTimeout)
	}
	if g.Threads < 0 {
		return bad("threads", "must not be negative (got %d)", g.Threads)
	}
	if g.BufferLimit < 0 {
		return bad("buffer_limit", "must not be negative (got %d)", g.BufferLimit)
	}
	return nil
}

// Validate checks one pool as [Config.Validate] does; the [*ConfigError]
// names no pool.
func (p *PoolConfig) Validate() error { return p.validate("") }

// badSetting returns the error of a pool's setting.
type badSetting func(key, format string, args ...any) error

func (p *PoolConfig) validate(pool string) error {
	bad := func(key, format string, args ...any) error {
		return &ConfigError{Pool: pool, Key: key, Err: fmt.Errorf(format, args...)}
	}
	c := p.WithDefaults()
	if _, err := parseListen(c.Listen); err != nil {
		return bad("listen", "%w", err)
	}
	if c.HashTag != "" && len(c.HashTag) != 2 {
		return bad("hash_tag", "%q: want two characters, such as \"{}\"", c.HashTag)
	}
	for _, check := range []func(badSetting) error{
		c.checkPlacement, c.checkNumbers, c.checkPolicies, c.checkServers, c.checkWeights, c.checkRedis, c.checkReplicas, c.checkChanges,
		func(bad badSetting) error { return c.TLS.check(c.Listen, bad) },
		func(bad badSetting) error { return c.ServerTLS.check(c.Servers, bad) },
		func(bad badSetting) error { return c.Traffic.check(c, bad) },
		func(bad badSetting) error { return c.HotKeys.check(c, bad) },
	} {
		if err := check(bad); err != nil {
			return err
		}
	}
	if err := c.checkMembership(bad); err != nil {
		return err
	}
	return nil
}

// checkPlacement checks distribution and the hash keys that go with it:
// hash for twemproxy's ketama and modula, key_hash and vnodes for kolco's
// own algorithms.
func (p *PoolConfig) checkPlacement(bad badSetting) error {
	switch p.Distribution {
	case twemproxy.Ketama, twemproxy.Modula, twemproxy.Random:
		if !slices.Contains(twemproxyHashes, p.Hash) { // twemproxy.New checks too; this names the key
			return bad("hash", "%q: want one of %s", p.Hash, strings.Join(twemproxyHashes, ", "))
		}
		if p.KeyHash != "" || p.VNodes != 0 {
			return bad("key_hash", "key_hash and vnodes apply to kolco's distributions; ketama, modula and random use hash")
		}
		if p.Distribution == twemproxy.Random && (p.Warm.on() || len(p.Sweep.Exclusive) > 0) {
			return bad("distribution", "random sends each request to any live server, so a key has no server of its own for warm changes or a sweep to follow; "+
				"set warm: {enabled: false} and no sweep.exclusive, or use ketama")
		}
		return nil
	}
	if _, ok := algo.Lookup(p.Distribution); !ok {
		return bad("distribution", "%q: want ketama or modula (twemproxy's), or one of kolco's: %s",
			p.Distribution, strings.Join(algo.Names(), ", "))
	}
	if p.Hash != "" {
		return bad("hash", "hash names twemproxy's key hashes, for ketama and modula; kolco's distributions use key_hash")
	}
	if _, err := keyhash.Parse(p.KeyHash); err != nil {
		return bad("key_hash", "%w", err)
	}
	if p.VNodes < 0 {
		return bad("vnodes", "must not be negative (got %d)", p.VNodes)
	}
	return nil
}

// checkNumbers checks the counts, sizes and durations.
func (p *PoolConfig) checkNumbers(bad badSetting) error {
	for _, f := range []struct {
		key string
		v   int
	}{
		{"backlog", p.Backlog}, {"server_connections", p.ServerConnections},
		{"server_failure_limit", p.ServerFailureLimit}, {"client_connections", p.ClientConnections},
		{"max_client_connections", p.MaxClientConnections}, {"max_value_size", p.MaxValueSize},
		{"max_keys", p.MaxKeys}, {"max_pending", p.MaxPending}, {"client_buffer_limit", p.ClientBufferLimit},
		{"outage_journal", p.OutageJournal},
	} {
		if f.v < 0 {
			return bad(f.key, "must not be negative (got %d)", f.v)
		}
	}
	for _, f := range []struct {
		key string
		v   time.Duration
	}{
		{"timeout", p.Timeout}, {"server_retry_timeout", p.ServerRetryTimeout},
		{"client_idle_timeout", p.ClientIdleTimeout}, {"health_check.timeout", p.HealthCheck.Timeout},
	} {
		if f.v < 0 {
			return bad(f.key, "must not be negative (got %v)", f.v)
		}
	}
	if p.ServerConnections > 1024 {
		return bad("server_connections", "at most 1024 (got %d)", p.ServerConnections)
	}
	return nil
}

// checkPolicies checks ejection and flush_all.
func (p *PoolConfig) checkPolicies(bad badSetting) error {
	switch p.Ejection {
	case EjectRehash:
		if !p.AutoEjectHosts {
			return bad("ejection", "rehash needs auto_eject_hosts: true")
		}
	case EjectFailFast:
	case EjectNone:
		if p.AutoEjectHosts {
			return bad("ejection", "none never marks a server down, and auto_eject_hosts: true asks for a failed server to be ejected: "+
				"remove auto_eject_hosts, or set ejection: rehash (twemproxy's auto_eject_hosts: the keys move to the live servers) or fail-fast (they fail at once)")
		}
		if p.Replicas > 1 {
			return bad("ejection", "none cannot be used with replicas: a copy that missed writes must be marked down and emptied before it serves again")
		}
	default:
		return bad("ejection", "%q: want %s, %s or %s", p.Ejection, EjectRehash, EjectFailFast, EjectNone)
	}
	switch p.FlushAll {
	case "refuse", "broadcast":
	default:
		return bad("flush_all", "%q: want refuse or broadcast", p.FlushAll)
	}
	return nil
}

// checkServers checks the servers, and that no two share a name. Two may
// share an address, as in nutcracker: an operator repoints a dead host's
// name at a spare that already serves under another name.
func (p *PoolConfig) checkServers(bad badSetting) error {
	if len(p.Servers) == 0 {
		return bad("servers", "none given")
	}
	names := map[string]int{}
	for i, s := range p.Servers {
		if s.Port == 0 && len(s.Host) > maxSocketPath {
			return bad("servers", "%w", serverAt{i, fmt.Errorf("%q: a unix socket path is at most %d bytes", s.String(), maxSocketPath)})
		}
		if j, dup := names[s.RingName()]; dup {
			return bad("servers", "%w", serverAt{i, fmt.Errorf("%q has the name %q, as server %d has", s.String(), s.RingName(), j+1)})
		}
		names[s.RingName()] = i
	}
	return nil
}

// checkReplicas checks replicas, zones and zone against the servers.
func (p *PoolConfig) checkReplicas(bad badSetting) error {
	switch {
	case p.Replicas < 1 || p.Replicas > maxReplicas:
		return bad("replicas", "want 1 to %d (got %d)", maxReplicas, p.Replicas)
	case p.Replicas > len(p.Servers):
		return bad("replicas", "%d replicas of each key need at least %d servers (got %d)", p.Replicas, p.Replicas, len(p.Servers))
	case p.Replicas > 1 && isTwemproxy(p):
		return bad("replicas", "twemproxy's %s places one copy of a key; use a kolco distribution, such as ring, for replicas", p.Distribution)
	}
	if len(p.Zones) == 0 {
		if p.Zone != "" {
			return bad("zone", "%q given without zones for the servers", p.Zone)
		}
		return nil
	}
	switch {
	case p.Replicas == 1:
		return bad("zones", "zones place the copies of a key; set replicas to 2 or more")
	case p.Distribution != "ring":
		return bad("zones", "only distribution: ring places a key's copies in distinct zones (got %s)", p.Distribution)
	}
	return p.checkZones(bad)
}

// checkZones checks that zones names each server at most once, by name or
// address, with a zone, and that zone is one of them.
func (p *PoolConfig) checkZones(bad badSetting) error {
	known := map[string]int{}
	servers := map[string]int{} // by address
	for i, s := range p.Servers {
		known[s.RingName()], known[s.Addr()] = i+1, i+1
		servers[s.Addr()]++
	}
	zones := map[string]bool{}
	zoned := map[int]string{}
	for server, zone := range p.Zones {
		i := known[server]
		if i == 0 {
			return bad("zones", "%q is not a server's name or address", server)
		}
		if servers[server] > 1 {
			return bad("zones", "%q is the address of more than one server; name the server instead", server)
		}
		if other, twice := zoned[i]; twice {
			return bad("zones", "server %d is given a zone twice, as %q and as %q", i, other, server)
		}
		zoned[i] = server
		if zone == "" {
			return bad("zones", "%q: empty zone", server)
		}
		zones[zone] = true
	}
	if p.Zone != "" && !zones[p.Zone] {
		return bad("zone", "%q is no server's zone", p.Zone)
	}
	return nil
}

// maxPeers bounds kolco.admin_peers: the status page asks each of them.
const maxPeers = 64

// checkPeers checks kolco.admin_peers.
func checkPeers(g *GlobalConfig) error {
	if len(g.AdminPeers) == 0 {
		return nil
	}
	if g.AdminListen == "" {
		return errors.New("given without admin_listen")
	}
	if len(g.AdminPeers) > maxPeers {
		return fmt.Errorf("at most %d peers (got %d)", maxPeers, len(g.AdminPeers))
	}
	for _, p := range g.AdminPeers {
		if _, err := fleet.AdminURL(p); err != nil {
			return err
		}
	}
	return nil
}
