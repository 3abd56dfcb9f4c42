package main

import (
	"fmt"
	"net"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/cassandra"
	"github.com/kolco-dev/kolco/compat/envoy"
	"github.com/kolco-dev/kolco/compat/goredis"
	"github.com/kolco-dev/kolco/compat/haproxy"
	"github.com/kolco-dev/kolco/compat/libmemcached"
	"github.com/kolco-dev/kolco/compat/nginx"
	"github.com/kolco-dev/kolco/compat/pymemcache"
	"github.com/kolco-dev/kolco/compat/redis"
	"github.com/kolco-dev/kolco/compat/twemproxy"
	"github.com/kolco-dev/kolco/proxy"
)

// compatFlags describe another system's servers in that system's own terms.
type compatFlags struct {
	config       string
	pool         string
	servers      string
	distribution string
	hashTag      string
}

func (c *compatFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.config, "config", "", "the other system's configuration: nutcracker.yml, an nginx upstream block, a HAProxy backend, CLUSTER NODES output")
	fs.StringVar(&c.pool, "pool", "", "twemproxy: the pool of --config to use (default: the only one)")
	fs.StringVar(&c.servers, "servers", "", "comma-separated servers in the system's own syntax (twemproxy 'host:port:weight [name]', libmemcached 'host:port[:weight]' as memcached_servers_parse reads it, pymemcache 'host:port', goredis 'name=host:port')")
	fs.StringVar(&c.distribution, "distribution", "", "twemproxy: ketama|modula; libmemcached: modula|ketama|ketama_weighted|ketama_spy; envoy: ring_hash|maglev")
	fs.StringVar(&c.hashTag, "hash-tag", "", "twemproxy: two characters such as {}")
}

// compatSystem builds the placement of another system from the flags; hash
// is the --hash flag when given, in that system's names. flags are the
// flags it reads; any other compat flag given with it is a usage error.
type compatSystem struct {
	name  string
	flags []string
	build func(c *compatFlags, hash string) (kolco.Placement, error)
}

// compatFlagNames are the flags only other systems take.
var compatFlagNames = []string{"config", "pool", "servers", "distribution", "hash-tag"}

var compatSystems = []compatSystem{
	{"twemproxy", []string{"config", "pool", "servers", "hash", "distribution", "hash-tag"}, buildTwemproxy},
	{"libmemcached", []string{"servers", "hash", "distribution"}, buildLibmemcached},
	{"nginx", []string{"config"}, buildNginx},
	{"haproxy", []string{"config"}, buildHAProxy},
	{"redis", []string{"config"}, buildRedis},
	{"goredis", []string{"servers"}, buildGoRedis},
	{"pymemcache", []string{"servers"}, buildPymemcache},
	{"cassandra", []string{"config"}, buildCassandra},
	{"envoy", []string{"servers", "distribution"}, buildEnvoy},
}

// rejectCompatFlags refuses the other systems' flags with kolco's own algorithms.
func rejectCompatFlags(algo string, fs *pflag.FlagSet) error {
	for _, f := range compatFlagNames {
		if fs.Changed(f) {
			return usagef("--%s does not apply to --algo %s", f, algo)
		}
	}
	return nil
}

func compatNames() []string {
	var names []string
	for _, s := range compatSystems {
		names = append(names, s.name)
	}
	return names
}

func findCompat(name string) (compatSystem, bool) {
	for _, s := range compatSystems {
		if s.name == name {
			return s, true
		}
	}
	return compatSystem{}, false
}

// buildCompat returns the placement of system s, refusing the flags that
// only kolco's own algorithms take.
func (c *compatFlags) buildCompat(s compatSystem, pf *placementFlags, fs *pflag.FlagSet) (kolco.Placement, error) {
	for _, f := range []string{"nodes", "nodes-file", "add", "remove", "vnodes", "seed", "zone-aware"} {
		if fs.Changed(f) {
			return nil, usagef("--%s does not apply to --algo %s: describe its servers with --config or --servers", f, s.name)
		}
	}
	for _, f := range append(compatFlagNames, "hash") {
		if fs.Changed(f) && !slices.Contains(s.flags, f) {
			return nil, usagef("--%s does not apply to --algo %s", f, s.name)
		}
	}
	hash := ""
	if fs.Changed("hash") {
		hash = pf.hash
	}
	return s.build(c, hash)
}

func (c *compatFlags) readConfig(system string) (string, error) {
	if c.config == "" {
		return "", usagef("--algo %s needs --config FILE", system)
	}
	b, err := os.ReadFile(c.config)
	return string(b), err
}

func buildTwemproxy(c *compatFlags, hash string) (kolco.Placement, error) {
	cfg := twemproxy.Config{Hash: hash, HashTag: c.hashTag, Distribution: c.distribution}
	var lines []string
	switch {
	case c.config != "" && c.servers != "":
		return nil, usagef("--config and --servers exclude each other")
	case c.config != "" && (hash != "" || c.hashTag != "" || c.distribution != ""):
		return nil, usagef("with --config, the pool's own hash, hash_tag and distribution apply: drop --hash, --hash-tag and --distribution")
	case c.config != "":
		file, err := proxy.LoadConfig(c.config)
		if err != nil {
			return nil, err
		}
		pool, err := pickPool(file, c.pool)
		if err != nil {
			return nil, err
		}
		cfg = twemproxy.Config{Hash: pool.Hash, HashTag: pool.HashTag, Distribution: pool.Distribution}
		lines = pool.Servers
	case c.servers != "":
		lines = splitIDs(c.servers)
	default:
		return nil, usagef("--algo twemproxy needs --config nutcracker.yml or --servers")
	}
	servers := make([]twemproxy.Server, 0, len(lines))
	for _, l := range lines {
		s, err := twemproxy.ParseServer(l)
		if err != nil {
			return nil, err
		}
		servers = append(servers, s)
	}
	return twemproxy.New(cfg, servers)
}

func pickPool(file *proxy.Config, name string) (*proxy.PoolConfig, error) {
	if name != "" {
		p, ok := file.Pools[name]
		if !ok {
			return nil, fmt.Errorf("no pool %q in the configuration (pools: %s)", name, strings.Join(file.PoolNames(), ", "))
		}
		return p, nil
	}
	if len(file.Pools) != 1 {
		return nil, usagef("the configuration has %d pools (%s): choose one with --pool", len(file.Pools), strings.Join(file.PoolNames(), ", "))
	}
	for _, p := range file.Pools {
		return p, nil
	}
	return nil, nil
}

func buildLibmemcached(c *compatFlags, hash string) (kolco.Placement, error) {
	if c.servers == "" {
		return nil, usagef("--algo libmemcached needs --servers host:port[:weight],...")
	}
	servers, err := libmemcached.ParseServers(c.servers)
	if err != nil {
		return nil, err
	}
	return libmemcached.New(libmemcached.Config{Distribution: c.distribution, Hash: hash}, servers)
}

func buildPymemcache(c *compatFlags, _ string) (kolco.Placement, error) {
	if c.servers == "" {
		return nil, usagef("--algo pymemcache needs --servers host:port,...")
	}
	return pymemcache.New(splitIDs(c.servers))
}

func buildNginx(c *compatFlags, _ string) (kolco.Placement, error) {
	text, err := c.readConfig("nginx")
	if err != nil {
		return nil, err
	}
	u, err := nginx.ParseUpstream(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.config, err)
	}
	if u.Consistent {
		return nginx.NewConsistent(u.Servers)
	}
	return nginx.NewHash(u.Servers)
}

func buildHAProxy(c *compatFlags, _ string) (kolco.Placement, error) {
	text, err := c.readConfig("haproxy")
	if err != nil {
		return nil, err
	}
	b, err := haproxy.ParseBackend(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.config, err)
	}
	return haproxy.New(b.Servers, b.Hash)
}

func buildRedis(c *compatFlags, _ string) (kolco.Placement, error) {
	text, err := c.readConfig("redis")
	if err != nil {
		return nil, err
	}
	masters, err := redis.ParseClusterNodes(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.config, err)
	}
	return redis.New(masters)
}

func buildGoRedis(c *compatFlags, _ string) (kolco.Placement, error) {
	if c.servers == "" {
		return nil, usagef("--algo goredis needs --servers name=host:port,...")
	}
	addrs := map[string]string{}
	for _, s := range splitIDs(c.servers) {
		name, addr, ok := strings.Cut(s, "=")
		if !ok {
			return nil, usagef("goredis shard %q: want name=host:port", s)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, usagef("goredis shard %q: %v", s, err)
		}
		if _, dup := addrs[name]; dup {
			return nil, usageError{fmt.Errorf("%w: goredis shard name %q", kolco.ErrDuplicateNode, name)}
		}
		addrs[name] = addr
	}
	return goredis.New(addrs)
}

func buildCassandra(c *compatFlags, _ string) (kolco.Placement, error) {
	text, err := c.readConfig("cassandra")
	if err != nil {
		return nil, err
	}
	endpoints, err := cassandra.ParseNodetoolRing(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.config, err)
	}
	return cassandra.New(endpoints)
}

// buildEnvoy reads hosts as "key" or "key=weight", key being what Envoy
// hashes for the host (its address unless hash_key or the hostname is used).
func buildEnvoy(c *compatFlags, _ string) (kolco.Placement, error) {
	if c.servers == "" {
		return nil, usagef("--algo envoy needs --servers key[=weight],...")
	}
	var hosts []envoy.Host
	for _, s := range splitIDs(c.servers) {
		key, w, hasWeight := strings.Cut(s, "=")
		h := envoy.Host{Key: key, Addr: key, Weight: 1}
		if hasWeight {
			n, err := strconv.ParseUint(w, 10, 32)
			if err != nil || n == 0 {
				return nil, usagef("envoy host %q: weight must be a positive integer", s)
			}
			h.Weight = uint32(n)
		}
		hosts = append(hosts, h)
	}
	switch c.distribution {
	case "", "ring_hash":
		return envoy.NewRing(hosts, envoy.RingConfig{})
	case "maglev":
		return envoy.NewMaglev(hosts, envoy.MaglevConfig{})
	}
	return nil, usagef("--distribution %q: envoy takes ring_hash or maglev", c.distribution)
}

// algoNames lists every --algo value: kolco's algorithms, then the systems.
func algoNames(own []string) string {
	all := append(append([]string(nil), own...), compatNames()...)
	sort.Strings(all[len(own):])
	return strings.Join(all, ", ")
}
