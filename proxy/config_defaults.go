package proxy

import (
	"time"

	"github.com/kolco-dev/kolco/compat/twemproxy"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/proxy/redis"
)

// DefaultPoolConfig returns the settings of a pool that sets none of them,
// each with the reason for it. Listen and Servers have no default. A few
// defaults follow from other settings and are not here: see
// [PoolConfig.WithDefaults].
func DefaultPoolConfig() PoolConfig {
	return PoolConfig{
		// nutcracker's own, so that a nutcracker.yml that leaves them out
		// places every key where nutcracker does.
		Distribution: twemproxy.Ketama,
		Hash:         "fnv1a_64",
		// nutcracker waits for a server forever; a cache's client would
		// rather have an error to fall back on than a request that hangs,
		// and a memcached on a LAN answers in well under a millisecond.
		Timeout: time.Second,
		// nutcracker's: a file run unchanged queues as many connections
		// waiting to be accepted as under nutcracker.
		Backlog: 512,
		// One pipelined connection carries many clients' requests per
		// write (see serverConn); more help only when one connection is
		// the bottleneck.
		ServerConnections: 1,
		// twemproxy's: two consecutive failures eject a server, and an
		// ejected server is tried again after 30 s.
		ServerFailureLimit: 2,
		ServerRetryTimeout: 30 * time.Second,
		// As nutcracker without auto_eject_hosts: a server is never marked
		// down, so one that restarts serves again at once.
		Ejection: EjectNone,
		// Probes as often as twemproxy retries, each allowed as long as a
		// request: a server comes back no later than under twemproxy.
		HealthCheck: HealthCheck{Interval: 30 * time.Second, Timeout: time.Second},
		// Far above what a healthy fleet of clients opens, low enough that
		// a client leaking connections runs out before the proxy's file
		// descriptors do.
		MaxClientConnections: 10000,
		// Never, as nutcracker: a client that holds an idle connection is
		// usually a pool, not an attack.
		ClientIdleTimeout: 0,
		// The largest item memcached can be set to store (-I 1024m): the
		// proxy must not refuse a value its servers hold, as nutcracker
		// does not. Memory is bounded by the buffer limits instead.
		MaxValueSize: 1 << 30,
		// No limit (0), as memcached sets none: a get of any number of keys
		// is served, its line counted in the buffer limits.
		MaxKeys: 0,
		// Room for a client to pipeline many requests, or a few large
		// values, before the proxy stops reading from it; a single
		// larger request is still served, alone.
		ClientBufferLimit: 64 << 20,
		// Enough for every key a busy pool writes to one server's share in
		// a retry timeout of a few seconds, at about 10 MB.
		OutageJournal: 100_000,
		// Deep enough to keep a pipelining client's servers busy, shallow
		// enough that a client that stops reading replies holds little.
		MaxPending: 128,
		// flush_all through a proxy empties every server of the pool; a
		// stray one must not flush a fleet unless the pool says so.
		FlushAll: "refuse",
		// One copy of each key, as twemproxy keeps.
		Replicas: 1,
		Warm: Warm{
			// Off for ketama, the default distribution: a nutcracker.yml
			// run unchanged sends each request to the one server
			// nutcracker would. On for kolco's distributions (see
			// WithDefaults), which no other program shares.
			Enabled: new(false),
			// Long enough for the keys requested every few minutes to
			// move with their first request; short enough that the
			// copies left behind are swept the same hour.
			Window: 10 * time.Minute,
			// A change within the window of another still finds the keys
			// the first one moved; older placements are rarely worth a
			// round trip per miss.
			Depth: 2,
			// At a 95% hit rate a thousand fallbacks in a row that find
			// nothing mean the keys worth moving have moved.
			Quiet: 1000,
		},
		Store: Store{
			// Rate, Batch and LatencyBound are 0: the clients' latency
			// paces the mover, and it sizes its own batches.
			// As redis-cli --cluster's default for MIGRATE.
			MigrateTimeout: 5000,
			// A MIGRATE of 1,000 fields of 1 KB held its server 5 ms,
			// of 10,000 of 100 bytes 73 ms (redis-server 7.0, the
			// tests' machine); a copy in pieces costs a dozen round
			// trips more than a MIGRATE, worth it above a few ms.
			BigKeyElements: 1000, BigKeyBytes: 1 << 20,
		},
		ReplicaReads: ReplicaReads{
			// A second of writes is what a client reading a replica may
			// miss; as Redis's own min-replicas-max-lag of 10 s bounds
			// what a failover loses, tighter.
			MaxLag: 1000,
		},
		// The traffic sample is off; its sizes are those it takes when on.
		Traffic: trafficDefaults,
		Sweep: Sweep{
			// No server is assumed to be the pool's alone: a sweep of a
			// shared server would delete other pools' keys.
			Exclusive: nil,
			// A thousand deletes a second cost a memcached thread about 1%
			// and sweep a million orphans in under 20 minutes.
			Rate: 1000,
		},
	}
}

// DefaultGlobalConfig returns the proxy-wide settings of a file that sets
// none of them, each with the reason for it.
func DefaultGlobalConfig() GlobalConfig {
	return GlobalConfig{
		// No endpoint unless asked for: a port opened unasked is a port
		// someone must firewall.
		MetricsListen: "",
		// No stats port unless asked for, as no metrics endpoint; refreshed
		// at nutcracker's interval when there is one.
		StatsListen:   "",
		StatsInterval: 30 * time.Second,
		// Reloads, ejections and restores, but no line per request.
		LogLevel: "info",
		// Long enough for requests in flight at the default timeout to
		// finish several times over, short enough for a rolling restart.
		ShutdownTimeout: 5 * time.Second,
		// Two of the largest values (max_value_size) in flight at once, or
		// thousands of clients' pipelines: a bound the operator can size
		// to the machine, where nutcracker has none.
		BufferLimit: 2 << 30,
	}
}

// WithDefaults returns a copy of c with every setting left at its zero
// value set to its default; c is not changed.
func (c *Config) WithDefaults() *Config {
	d := &Config{Pools: make(map[string]*PoolConfig, len(c.Pools)), Global: *c.Global.WithDefaults(), Path: c.Path}
	for name, p := range c.Pools {
		d.Pools[name] = p.WithDefaults()
	}
	return d
}

// WithDefaults returns a copy of g with every setting left at its zero
// value set to its default.
func (g *GlobalConfig) WithDefaults() *GlobalConfig {
	d, c := DefaultGlobalConfig(), *g
	setDefault(&c.LogLevel, d.LogLevel)
	setDefault(&c.ShutdownTimeout, d.ShutdownTimeout)
	setDefault(&c.BufferLimit, d.BufferLimit)
	setDefault(&c.StatsInterval, d.StatsInterval)
	return &c
}

// WithDefaults returns a copy of p with every setting left at its zero
// value set to its default: those of [DefaultPoolConfig], and those that
// follow from other settings. Hash is set for ketama and modula, KeyHash
// (keyhash.Default) for kolco's distributions but slots (CRC16 without
// it); Ejection is rehash with auto_eject_hosts, else fail-fast with
// replicas, else none; the health check's interval is ServerRetryTimeout
// and its timeout Timeout; warm changes are on for kolco's distributions
// with one copy, else off. The copy shares p's Servers, Zones and
// Sweep.Exclusive; p is not changed.
func (p *PoolConfig) WithDefaults() *PoolConfig {
	d, c := DefaultPoolConfig(), *p
	setDefault(&c.Distribution, d.Distribution)
	if isTwemproxy(&c) {
		setDefault(&c.Hash, d.Hash)
	} else if c.Distribution != "slots" { // slots hashes with Redis Cluster's CRC16 unless told
		setDefault(&c.KeyHash, keyhash.Default)
	}
	setDefault(&c.Timeout, d.Timeout)
	setDefault(&c.Backlog, d.Backlog)
	setDefault(&c.ServerConnections, d.ServerConnections)
	setDefault(&c.ServerFailureLimit, d.ServerFailureLimit)
	setDefault(&c.ServerRetryTimeout, d.ServerRetryTimeout)
	setDefault(&c.MaxClientConnections, d.MaxClientConnections)
	if c.Redis {
		// A Redis value may be as large as the server's
		// proto-max-bulk-len; memcached's item limit means nothing here.
		setDefault(&c.MaxValueSize, redis.DefaultMaxBulk)
	}
	setDefault(&c.MaxValueSize, d.MaxValueSize)
	setDefault(&c.ClientBufferLimit, d.ClientBufferLimit)
	setDefault(&c.MaxPending, d.MaxPending)
	setDefault(&c.OutageJournal, d.OutageJournal)
	setDefault(&c.FlushAll, d.FlushAll)
	setDefault(&c.Replicas, d.Replicas)
	switch {
	case c.Ejection != "":
	case c.AutoEjectHosts:
		c.Ejection = EjectRehash
	case c.Replicas > 1:
		c.Ejection = EjectFailFast
	default:
		c.Ejection = d.Ejection
	}
	setDefault(&c.HealthCheck.Interval, c.ServerRetryTimeout)
	setDefault(&c.HealthCheck.Timeout, c.Timeout)
	if c.Warm.Enabled == nil {
		c.Warm.Enabled = new(!isTwemproxy(&c) && c.Replicas <= 1 && !c.Redis)
	}
	setDefault(&c.Warm.Window, d.Warm.Window)
	setDefault(&c.Warm.Depth, d.Warm.Depth)
	setDefault(&c.Warm.Quiet, d.Warm.Quiet)
	setDefault(&c.Sweep.Rate, d.Sweep.Rate)
	setDefault(&c.Store.MigrateTimeout, d.Store.MigrateTimeout)
	setDefault(&c.Store.BigKeyElements, d.Store.BigKeyElements)
	setDefault(&c.Store.BigKeyBytes, d.Store.BigKeyBytes)
	setDefault(&c.ReplicaReads.MaxLag, d.ReplicaReads.MaxLag)
	setDefault(&c.Traffic.Requests, d.Traffic.Requests)
	setDefault(&c.Traffic.KeyShare, d.Traffic.KeyShare)
	setDefault(&c.Traffic.TopKeys, d.Traffic.TopKeys)
	setDefault(&c.Traffic.Window, d.Traffic.Window)
	return &c
}

// setDefault sets *v to def when it is the zero value.
func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}
