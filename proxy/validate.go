package proxy

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/compat/twemproxy"
	"github.com/kolco-dev/kolco/keyhash"
)

// twemproxyHashes are the hash names nutcracker 0.5.0 accepts.
var twemproxyHashes = []string{"one_at_a_time", "md5", "crc16", "crc32", "crc32a",
	"fnv1_64", "fnv1a_64", "fnv1_32", "fnv1a_32", "hsieh", "murmur", "jenkins"}

// Validate checks every pool, fills in defaults, and checks that no two
// pools listen on the same address. The error wraps [ErrBadConfig] and names
// the pool and the key at fault.
func (c *Config) Validate() error {
	if len(c.Pools) == 0 {
		return fmt.Errorf("%w: no pools", ErrBadConfig)
	}
	if err := c.Global.validate(); err != nil {
		return err
	}
	listens := map[string]string{}
	for _, name := range c.PoolNames() {
		p := c.Pools[name]
		if err := p.Validate(); err != nil {
			return fmt.Errorf("pool %q: %w", name, err)
		}
		l, _ := parseListen(p.Listen) // valid: checked by Validate
		if other, dup := listens[l.addr]; dup {
			return fmt.Errorf("%w: pools %q and %q both listen on %s", ErrBadConfig, other, name, l.addr)
		}
		listens[l.addr] = name
	}
	return nil
}

func (g *GlobalConfig) validate() error {
	switch strings.ToLower(g.LogLevel) {
	case "", "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("%w: kolco.log_level %q: want debug, info, warn or error", ErrBadConfig, g.LogLevel)
	}
	if g.MetricsListen != "" {
		if _, _, err := net.SplitHostPort(g.MetricsListen); err != nil {
			return fmt.Errorf("%w: kolco.metrics_listen: %w", ErrBadConfig, err)
		}
	}
	if g.ShutdownTimeout < 0 {
		return fmt.Errorf("%w: kolco.shutdown_timeout must not be negative", ErrBadConfig)
	}
	if g.ShutdownTimeout == 0 {
		g.ShutdownTimeout = 5 * time.Second
	}
	return nil
}

// Validate checks the pool and fills in defaults. The error wraps
// [ErrBadConfig].
func (p *PoolConfig) Validate() error {
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrBadConfig, key, fmt.Sprintf(format, args...))
	}
	if p.Redis || p.RedisAuth != "" || p.RedisDB != 0 {
		return bad("redis", "only memcached pools are supported")
	}
	if _, err := parseListen(p.Listen); err != nil {
		return bad("listen", "%v", err)
	}
	if p.HashTag != "" && len(p.HashTag) != 2 {
		return bad("hash_tag", "%q: want two characters, such as \"{}\"", p.HashTag)
	}
	if err := p.validatePlacement(bad); err != nil {
		return err
	}
	if err := p.validateNumbers(bad); err != nil {
		return err
	}
	if err := p.validateServers(bad); err != nil {
		return err
	}
	return p.validateReplicas(bad)
}

// validateReplicas checks replicas, zones and zone against the servers.
func (p *PoolConfig) validateReplicas(bad func(key, format string, args ...any) error) error {
	if p.Replicas == 0 {
		p.Replicas = 1
	}
	switch {
	case p.Replicas < 1 || p.Replicas > maxReplicas:
		return bad("replicas", "want 1 to %d (got %d)", maxReplicas, p.Replicas)
	case p.Replicas > len(p.Servers):
		return bad("replicas", "%d replicas of each key need at least %d servers (got %d)", p.Replicas, p.Replicas, len(p.Servers))
	case p.Replicas > 1 && (p.Distribution == "ketama" || p.Distribution == "modula"):
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
	known := map[string]int{}
	for i, line := range p.Servers {
		s, _ := twemproxy.ParseServer(line) // valid: checked by validateServers
		known[s.RingName()], known[s.Addr()] = i+1, i+1
	}
	zones := map[string]bool{}
	zoned := map[int]string{}
	for server, zone := range p.Zones {
		i := known[server]
		if i == 0 {
			return bad("zones", "%q is not a server's name or address", server)
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

// validatePlacement checks distribution and the hash keys that go with it:
// hash for twemproxy's ketama and modula, key_hash and vnodes for kolco's
// own algorithms.
func (p *PoolConfig) validatePlacement(bad func(key, format string, args ...any) error) error {
	if p.Distribution == "" {
		p.Distribution = "ketama"
	}
	switch p.Distribution {
	case "ketama", "modula":
		if p.Hash == "" {
			p.Hash = "fnv1a_64"
		}
		if !slices.Contains(twemproxyHashes, p.Hash) { // twemproxy.New checks too; this names the key
			return bad("hash", "%q: want one of %s", p.Hash, strings.Join(twemproxyHashes, ", "))
		}
		if p.KeyHash != "" || p.VNodes != 0 {
			return bad("key_hash", "key_hash and vnodes apply to kolco's distributions; ketama and modula use hash")
		}
		return nil
	case "random":
		return bad("distribution", "random places keys by chance; use ketama or modula")
	}
	if _, ok := algo.Lookup(p.Distribution); !ok {
		return bad("distribution", "%q: want ketama or modula (twemproxy's), or one of kolco's: %s",
			p.Distribution, strings.Join(algo.Names(), ", "))
	}
	if p.Hash != "" {
		return bad("hash", "hash names twemproxy's key hashes, for ketama and modula; kolco's distributions use key_hash")
	}
	if _, err := keyhash.Parse(p.KeyHash); err != nil {
		return bad("key_hash", "%v", err)
	}
	if p.KeyHash == "" {
		p.KeyHash = keyhash.Default
	}
	if p.VNodes < 0 {
		return bad("vnodes", "must not be negative (got %d)", p.VNodes)
	}
	return nil
}

func (p *PoolConfig) validateNumbers(bad func(key, format string, args ...any) error) error {
	for _, f := range []struct {
		key string
		v   *int
		def int
	}{
		{"backlog", &p.Backlog, 512},
		{"server_connections", &p.ServerConnections, 1},
		{"server_failure_limit", &p.ServerFailureLimit, 2},
		{"client_connections", &p.ClientConnections, 0},
		{"max_client_connections", &p.MaxClientConnections, 0},
		{"max_value_size", &p.MaxValueSize, 1 << 20},
		{"max_keys", &p.MaxKeys, 4096},
		{"max_pending", &p.MaxPending, 128},
	} {
		if *f.v < 0 {
			return bad(f.key, "must not be negative (got %d)", *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	for _, f := range []struct {
		key string
		v   *time.Duration
		def time.Duration
	}{
		{"timeout", &p.Timeout, time.Second},
		{"server_retry_timeout", &p.ServerRetryTimeout, 30 * time.Second},
		{"client_idle_timeout", &p.ClientIdleTimeout, 0},
		{"health_check.timeout", &p.HealthCheck.Timeout, 0},
	} {
		if *f.v < 0 {
			return bad(f.key, "must not be negative (got %v)", *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if p.ServerConnections > 1024 {
		return bad("server_connections", "at most 1024 (got %d)", p.ServerConnections)
	}
	if p.MaxClientConnections == 0 {
		p.MaxClientConnections = 10000
	}
	if p.HealthCheck.Interval == 0 {
		p.HealthCheck.Interval = p.ServerRetryTimeout
	}
	if p.HealthCheck.Timeout == 0 {
		p.HealthCheck.Timeout = p.Timeout
	}
	switch p.Ejection {
	case "":
		switch {
		case p.AutoEjectHosts:
			p.Ejection = EjectRehash
		case p.Replicas > 1:
			p.Ejection = EjectFailFast
		default:
			p.Ejection = EjectNone
		}
	case EjectRehash:
		if !p.AutoEjectHosts {
			return bad("ejection", "rehash needs auto_eject_hosts: true")
		}
	case EjectFailFast:
	case EjectNone:
		if p.Replicas > 1 {
			return bad("ejection", "none cannot be used with replicas: a copy that missed writes must be marked down and emptied before it serves again")
		}
	default:
		return bad("ejection", "%q: want %s, %s or %s", p.Ejection, EjectRehash, EjectFailFast, EjectNone)
	}
	switch p.FlushAll {
	case "":
		p.FlushAll = "refuse"
	case "refuse", "broadcast":
	default:
		return bad("flush_all", "%q: want refuse or broadcast", p.FlushAll)
	}
	return nil
}

func (p *PoolConfig) validateServers(bad func(key, format string, args ...any) error) error {
	if len(p.Servers) == 0 {
		return bad("servers", "none given")
	}
	names := map[string]int{}
	addrs := map[string]int{}
	for i, line := range p.Servers {
		s, err := twemproxy.ParseServer(line)
		if err != nil {
			return bad("servers", "%d: %v", i+1, err)
		}
		if s.Port == 0 && len(s.Host) > maxSocketPath {
			return bad("servers", "%d: %q: a unix socket path is at most %d bytes", i+1, line, maxSocketPath)
		}
		if j, dup := names[s.RingName()]; dup {
			return bad("servers", "%d and %d have the same name %q", j+1, i+1, s.RingName())
		}
		if j, dup := addrs[s.Addr()]; dup {
			return bad("servers", "%d and %d have the same address %s", j+1, i+1, s.Addr())
		}
		names[s.RingName()], addrs[s.Addr()] = i, i
	}
	return nil
}
