package proxy

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/compat/twemproxy"
	"github.com/kolco-dev/kolco/keyhash"
)

// GlobalKey is the top-level key of the proxy-wide settings; every other
// top-level key names a pool, as in nutcracker.yml.
const GlobalKey = "kolco"

// Config is a whole configuration file: pools by name and the proxy-wide
// settings.
type Config struct {
	// Pools by name, as the top-level keys of nutcracker.yml.
	Pools map[string]*PoolConfig
	// Global holds the settings under the top-level "kolco" key.
	Global GlobalConfig
}

// GlobalConfig holds proxy-wide settings.
type GlobalConfig struct {
	// MetricsListen is the address of the Prometheus /metrics endpoint;
	// empty means no endpoint.
	MetricsListen string `yaml:"metrics_listen"`
	// LogLevel is debug, info (default), warn or error.
	LogLevel string `yaml:"log_level"`
	// ShutdownTimeout is how long, in milliseconds, a shutdown waits for
	// requests in flight. Default 5000.
	ShutdownTimeout int `yaml:"shutdown_timeout"`
}

// PoolConfig is one pool. The first block of fields is nutcracker.yml's,
// with its meaning and defaults; the second is kolco's. Zero values mean
// the documented default, filled in by [Config.Validate].
type PoolConfig struct {
	// Listen is "host:port", or "/path/to.sock [mode]" for a unix socket
	// (mode in octal, such as 0666).
	Listen string `yaml:"listen"`
	// Hash is the key hash: one_at_a_time, md5, crc16, crc32, crc32a,
	// fnv1_64, fnv1a_64 (default), fnv1_32, fnv1a_32, hsieh, murmur, jenkins.
	Hash string `yaml:"hash"`
	// HashTag is two characters such as "{}": only the text between them
	// is hashed.
	HashTag string `yaml:"hash_tag"`
	// Distribution is twemproxy's ketama (default) or modula, or one of
	// kolco's algorithms by name (ring, rendezvous, maglev, jump, ...; see
	// package algo), which place keys by KeyHash instead of Hash.
	Distribution string `yaml:"distribution"`
	// Timeout is how long, in milliseconds, to wait for a server's reply.
	// nutcracker waits forever by default; this proxy defaults to 1000.
	Timeout int `yaml:"timeout"`
	// Backlog is the listen backlog. Accepted for compatibility; the
	// operating system's setting applies.
	Backlog int `yaml:"backlog"`
	// Preconnect connects to every server at start.
	Preconnect bool `yaml:"preconnect"`
	// Redis must be false: only memcached pools are served.
	Redis bool `yaml:"redis"`
	// RedisAuth and RedisDB are accepted only empty, for redis pools.
	RedisAuth string `yaml:"redis_auth"`
	RedisDB   int    `yaml:"redis_db"`
	// ServerConnections is the number of connections to each server.
	// Default 1.
	ServerConnections int `yaml:"server_connections"`
	// AutoEjectHosts ejects a server after ServerFailureLimit consecutive
	// failures.
	AutoEjectHosts bool `yaml:"auto_eject_hosts"`
	// ServerRetryTimeout is how long, in milliseconds, an ejected server
	// stays out before it is tried again. Default 30000.
	ServerRetryTimeout int `yaml:"server_retry_timeout"`
	// ServerFailureLimit is the number of consecutive failures that eject
	// a server. Default 2.
	ServerFailureLimit int `yaml:"server_failure_limit"`
	// ClientConnections is accepted and ignored, as nutcracker 0.5.0
	// ignores it (it serves any number of clients whatever its value), so
	// that a twemproxy config that sets it does not start refusing
	// clients; MaxClientConnections sets kolco's limit.
	ClientConnections int `yaml:"client_connections"`
	// TCPKeepalive is accepted for compatibility.
	TCPKeepalive bool `yaml:"tcpkeepalive"`
	// Servers are "host:port:weight [name]" lines.
	Servers []string `yaml:"servers"`

	// KeyHash is the key hash of kolco's distributions (xxh3 default,
	// xxh64, murmur3, fnv1a, crc32, md5; see package keyhash).
	KeyHash string `yaml:"key_hash"`
	// VNodes is the ring's points per unit of weight (distribution: ring);
	// 0 means the ring's default.
	VNodes int `yaml:"vnodes"`
	// Ejection is what happens to a failed server's keys: "rehash" moves
	// them to the live servers, as nutcracker does with auto_eject_hosts;
	// "fail-fast" keeps the placement and answers SERVER_ERROR for them, so
	// that no key is ever read from a server that does not own it, and
	// marks a failed server down until it is back; "none" never marks a
	// server down, every request for its keys tries it (nutcracker without
	// auto_eject_hosts). Default: rehash when auto_eject_hosts is true,
	// else fail-fast with replicas, else none.
	Ejection string `yaml:"ejection"`
	// HealthCheck probes failed servers and restores them when they answer.
	HealthCheck HealthCheck `yaml:"health_check"`
	// MaxClientConnections limits open client connections; 0 means 10000.
	MaxClientConnections int `yaml:"max_client_connections"`
	// ClientIdleTimeout closes a client connection idle for that many
	// milliseconds; 0 means never.
	ClientIdleTimeout int `yaml:"client_idle_timeout"`
	// MaxValueSize is the largest value accepted, in bytes. Default 1 MiB.
	MaxValueSize int `yaml:"max_value_size"`
	// MaxKeys is the most keys in one get. Default 4096.
	MaxKeys int `yaml:"max_keys"`
	// FlushAll is "refuse" (default) or "broadcast" to every server.
	FlushAll string `yaml:"flush_all"`
	// MaxPending is the most requests one client may have in flight
	// before the proxy stops reading from it. Default 128.
	MaxPending int `yaml:"max_pending"`
	// Replicas stores each key on that many servers (1 to 8; default 1),
	// the first that many of the key's preference list of a kolco
	// distribution: writes go to all of them, a read to one (see Zone).
	// cas, and meta commands with a C flag, are refused when Replicas > 1,
	// since each copy has its own cas value.
	Replicas int `yaml:"replicas"`
	// Zones maps servers, by name (or address when unnamed), to their
	// zones. Given zones, a key's replicas are in distinct zones while
	// there are zones left.
	Zones map[string]string `yaml:"zones"`
	// Zone is this proxy's zone: a read goes to the key's first live
	// replica in it, else to its first live replica.
	Zone string `yaml:"zone"`
}

// maxReplicas bounds Replicas.
const maxReplicas = 8

// HealthCheck configures active probes ("version") of failed servers.
type HealthCheck struct {
	// Interval between probes of a failed server, in milliseconds;
	// default ServerRetryTimeout. Negative disables probes: a server then
	// returns ServerRetryTimeout after it was marked down, as in twemproxy.
	Interval int `yaml:"interval"`
	// Timeout of one probe, in milliseconds; default the pool's Timeout.
	Timeout int `yaml:"timeout"`
}

// Ejection policies.
const (
	EjectRehash   = "rehash"
	EjectFailFast = "fail-fast"
	// EjectNone never marks a server down: every request for its keys
	// tries it, as nutcracker does without auto_eject_hosts, so a server
	// that restarts serves again at once.
	EjectNone = "none"
)

// twemproxyHashes are the hash names nutcracker 0.5.0 accepts.
var twemproxyHashes = []string{"one_at_a_time", "md5", "crc16", "crc32", "crc32a",
	"fnv1_64", "fnv1a_64", "fnv1_32", "fnv1a_32", "hsieh", "murmur", "jenkins"}

// LoadConfig reads and validates the configuration file at path.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig parses a configuration and validates it. Unknown keys are
// errors, as in nutcracker. The error wraps [ErrBadConfig].
func ParseConfig(data []byte) (cfg *Config, err error) {
	defer func() {
		// The YAML decoder is not ours; never let a panic in it reach the caller.
		if r := recover(); r != nil {
			cfg, err = nil, fmt.Errorf("%w: yaml: %v", ErrBadConfig, r)
		}
	}()
	var raw map[string]yaml.Node
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	cfg = &Config{Pools: map[string]*PoolConfig{}}
	for name, node := range raw {
		var dst any = &cfg.Global
		if name != GlobalKey {
			if err := refuseZeros(&node); err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrBadConfig, name, err)
			}
			p := &PoolConfig{}
			cfg.Pools[name] = p
			dst = p
		}
		if err := decodeStrict(&node, dst); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrBadConfig, name, err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// twemproxyZeros are the settings to which nutcracker gives 0 a meaning of
// its own, where kolco's 0 would mean its default: rather than read the
// same config differently, kolco refuses an explicit 0.
var twemproxyZeros = map[string]string{
	"timeout":              "no timeout",
	"server_retry_timeout": "retry at once",
	"server_failure_limit": "eject on the first failure",
}

// refuseZeros returns an error for a pool node that sets one of
// twemproxyZeros to 0.
func refuseZeros(node *yaml.Node) error {
	if node.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		k, v := node.Content[i], node.Content[i+1]
		meaning, ok := twemproxyZeros[k.Value]
		if !ok || v.Kind != yaml.ScalarNode {
			continue
		}
		if n, err := strconv.Atoi(v.Value); err == nil && n == 0 {
			return fmt.Errorf("%s: 0 means %q to nutcracker, which kolco does not do; leave it out for kolco's default or set a positive value", k.Value, meaning)
		}
	}
	return nil
}

// decodeStrict decodes node into dst, rejecting unknown fields.
func decodeStrict(node *yaml.Node, dst any) error {
	out, err := yaml.Marshal(node)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(out))
	dec.KnownFields(true)
	return dec.Decode(dst)
}

// PoolNames returns the pool names, sorted.
func (c *Config) PoolNames() []string {
	names := make([]string, 0, len(c.Pools))
	for n := range c.Pools {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

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
		g.ShutdownTimeout = 5000
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

// zoneOf returns the zone of a server, by name or else by address.
func (p *PoolConfig) zoneOf(s twemproxy.Server) string {
	if z, ok := p.Zones[s.RingName()]; ok {
		return z
	}
	return p.Zones[s.Addr()]
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
		{"timeout", &p.Timeout, 1000},
		{"backlog", &p.Backlog, 512},
		{"server_connections", &p.ServerConnections, 1},
		{"server_retry_timeout", &p.ServerRetryTimeout, 30000},
		{"server_failure_limit", &p.ServerFailureLimit, 2},
		{"client_connections", &p.ClientConnections, 0},
		{"max_client_connections", &p.MaxClientConnections, 0},
		{"client_idle_timeout", &p.ClientIdleTimeout, 0},
		{"max_value_size", &p.MaxValueSize, 1 << 20},
		{"max_keys", &p.MaxKeys, 4096},
		{"max_pending", &p.MaxPending, 128},
		{"health_check.timeout", &p.HealthCheck.Timeout, 0},
	} {
		if *f.v < 0 {
			return bad(f.key, "must not be negative (got %d)", *f.v)
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

// ms returns a millisecond setting as a duration.
func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }
