package proxy

import (
	"slices"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat"
	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// GlobalKey is the top-level key of the proxy-wide settings; every other
// top-level key names a pool, as in nutcracker.yml (compat.KolcoKey).
const GlobalKey = compat.KolcoKey

// Config is a whole configuration file: pools by name and the proxy-wide
// settings.
type Config struct {
	// Pools by name, as the top-level keys of nutcracker.yml.
	Pools map[string]*PoolConfig
	// Global holds the settings under the top-level "kolco" key.
	Global GlobalConfig
	// Path is the file the configuration was read from by [LoadConfig];
	// empty when it was parsed from bytes. The state file is beside it
	// (see GlobalConfig.StateFile).
	Path string
}

// GlobalConfig holds proxy-wide settings.
type GlobalConfig struct {
	// StateFile is where the proxy keeps what decides the placement of
	// its pools whose distribution depends on the history of changes
	// (jump, anchor, dx, slots, ...), written after each change, so that
	// a restart, or a second proxy started beside it, places every key as
	// the proxy that lived through the changes; a start whose
	// configuration does not match the servers it records is refused.
	// Default: beside the configuration file, its name with
	// ".kolco-state" appended; a relative path is taken from the
	// configuration file's directory. Nothing is written for pools of
	// other distributions.
	StateFile string `yaml:"state_file"`
	// MetricsListen is the address of the Prometheus /metrics endpoint;
	// empty means no endpoint.
	MetricsListen string `yaml:"metrics_listen"`
	// StatsListen is the address of nutcracker's stats port (nutcracker's
	// -a and -s), which serves its JSON stats; empty means none.
	StatsListen string `yaml:"stats_listen"`
	// StatsInterval (stats_interval, in milliseconds in the file, as
	// nutcracker's -i) is how often the stats port's figures are
	// refreshed. Default 30 s, nutcracker's.
	StatsInterval time.Duration `yaml:"-"`
	// AdminListen is the address of the admin endpoint (where a key
	// lives, each pool's servers, health and shares, in JSON; and
	// /metrics): "host:port", or ":port" for 127.0.0.1; empty means none.
	AdminListen string `yaml:"admin_listen"`
	// AdminTokenFile, when set, names a file whose first line is the
	// token the admin endpoint asks for ("Authorization: Bearer ...").
	AdminTokenFile string `yaml:"admin_token_file"`
	// AdminPeers are the admin addresses ("host:port") of the other
	// proxies of a fleet: the admin endpoint's status page asks them for
	// their fingerprints and says whether they agree with this one. They
	// are asked with this proxy's token, if any.
	AdminPeers []string `yaml:"admin_peers"`
	// AdminTLS (admin_tls) serves the admin endpoint and /metrics over
	// TLS (https), with a client certificate required when
	// client_ca_file is set; the files are read again as a pool's tls
	// files are. StatsTLS serves the stats port over TLS with them too
	// (nutcracker's is plaintext).
	AdminTLS *ClientTLS `yaml:"admin_tls"`
	StatsTLS bool       `yaml:"stats_tls"`
	// AdminPeerCAFile is the authority that signs the peers' admin
	// certificates: peers given as host:port are then asked over https,
	// and their certificates verified against it. Empty: the system's
	// authorities for https peers.
	AdminPeerCAFile string `yaml:"admin_peer_ca_file"`
	// Threads is how many threads (GOMAXPROCS) the program runs the
	// proxy on: 0, the default, adapts them to the load (see
	// AdaptThreads); a number fixes them. A GOMAXPROCS environment
	// variable overrides both. The program applies it at start; a
	// [Server] alone does not.
	Threads int `yaml:"threads"`
	// LogLevel is debug, info (default), warn or error.
	LogLevel string `yaml:"log_level"`
	// WatchConfig makes the program apply its configuration file when the
	// file changes and has stayed the same for two seconds, besides on
	// SIGHUP. Off by default, as in
	// nutcracker, which applies nothing until told: a file staged by
	// configuration management would otherwise go live half reviewed, and
	// a fleet pushed to in turn would disagree meanwhile. The program's
	// --watch-config turns it on too.
	WatchConfig bool `yaml:"watch_config"`
	// ShutdownTimeout (shutdown_timeout, in milliseconds in the file) is
	// how long a shutdown waits for requests in flight. Default 5 s.
	ShutdownTimeout time.Duration `yaml:"-"`
	// BufferLimit is the most bytes of requests and replies the proxy
	// holds for all its clients together: data blocks, values, long
	// lines. A request waits up to its pool's timeout for room, then gets
	// "SERVER_ERROR out of memory storing object"; a reply's value that
	// does not fit fails its request. Default 2 GiB.
	BufferLimit int64 `yaml:"buffer_limit"`
}

// PoolConfig is one pool. The first block of fields is nutcracker.yml's,
// with its meaning and defaults; the second is kolco's. Each field's YAML
// key is its tag; the durations, whose tag is "-", are written in
// milliseconds in the file, under the key their comment gives. A setting
// left at its zero value means its default: see [DefaultPoolConfig] and
// [PoolConfig.WithDefaults].
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
	// Timeout (timeout) is how long to wait for a server to connect or
	// answer. nutcracker waits forever by default; this proxy defaults to
	// 1 s.
	Timeout time.Duration `yaml:"-"`
	// Backlog is the listen backlog, as nutcracker's: the connections the
	// kernel completes before the proxy accepts them, capped by the
	// system's somaxconn.
	Backlog int `yaml:"backlog"`
	// Preconnect connects to every server at start.
	Preconnect bool `yaml:"preconnect"`
	// Redis makes the pool speak the Redis protocol (RESP2) to its clients
	// and servers instead of memcached's.
	Redis bool `yaml:"redis"`
	// RedisAuth, as in nutcracker, is the password clients must give with
	// AUTH before any other command, and the one the proxy gives each
	// server on connecting (see RedisClientAuth and RedisServerAuth).
	RedisAuth string `yaml:"redis_auth"`
	// RedisDB is the database the proxy selects on every server
	// connection; clients see it as database 0. In a memcached pool it is
	// ignored, as nutcracker ignores it, and the start logs that it is.
	RedisDB int `yaml:"redis_db"`
	// RedisBlockingConnections (redis_blocking_connections) is the most
	// blocking commands (BLPOP, BRPOP, BLMOVE, ...) the pool's clients may
	// have waiting at once, each on a server connection of its own; one
	// past it is refused. 0 means the default, 100: enough for the
	// workers of a queue, far below what a server's maxclients allows.
	RedisBlockingConnections int `yaml:"redis_blocking_connections"`
	// ServerConnections is the number of connections to each server.
	// Default 1.
	ServerConnections int `yaml:"server_connections"`
	// AutoEjectHosts ejects a server after ServerFailureLimit consecutive
	// failures.
	AutoEjectHosts bool `yaml:"auto_eject_hosts"`
	// ServerRetryTimeout (server_retry_timeout) is how long an ejected
	// server stays out before it is tried again. Default 30 s.
	ServerRetryTimeout time.Duration `yaml:"-"`
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
	// Servers are the pool's servers, each written in the file as
	// nutcracker writes it, "host:port:weight [name]" (or
	// "/path/to.sock:weight [name]"), and parsed once, when the file is
	// read.
	Servers []twemproxy.Server `yaml:"-"`

	// Membership (membership), when set, takes the pool's servers from a
	// membership source - etcd, DNS or a file - applying each version as
	// a change; Servers are the default until its first version. See
	// [Membership].
	Membership *Membership `yaml:"membership"`

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
	// HealthCheck (health_check) probes failed servers and restores them
	// when they answer.
	HealthCheck HealthCheck `yaml:"-"`
	// MaxClientConnections limits open client connections; 0 means 10000.
	MaxClientConnections int `yaml:"max_client_connections"`
	// ClientIdleTimeout (client_idle_timeout) closes a client connection
	// idle that long; 0 means never.
	ClientIdleTimeout time.Duration `yaml:"-"`
	// MaxValueSize is the largest value accepted, in bytes. Default 1 GiB,
	// the largest item memcached can store (-I 1024m).
	MaxValueSize int `yaml:"max_value_size"`
	// MaxKeys is the most keys in one get; 0, the default, means no
	// limit, as memcached sets none.
	MaxKeys int `yaml:"max_keys"`
	// ClientBufferLimit is the most bytes one client's requests in flight
	// hold before the proxy stops reading its next request (one request
	// alone may hold more, within BufferLimit). Default 64 MiB.
	ClientBufferLimit int `yaml:"client_buffer_limit"`
	// FlushAll is "refuse" (default) or "broadcast" to every server:
	// memcached's flush_all, and a Redis pool's FLUSHDB and FLUSHALL.
	FlushAll string `yaml:"flush_all"`
	// OutageJournal (outage_journal) is the most keys the pool notes as
	// written elsewhere while one of its servers is marked down (under
	// rehash, or with replicas), so that its return settles exactly those
	// (see docs/failures.md): about 100 bytes each. Past it, what
	// the server missed is unknown: it is emptied (flush_all) when it is
	// the pool's alone (sweep.exclusive), else it stays down until an
	// operator empties it. Default 100000.
	OutageJournal int `yaml:"outage_journal"`
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
	// RedisClientAuth is the password clients must give, in place of
	// RedisAuth's: the proxy's own, so that clients need not know the
	// servers'.
	RedisClientAuth string `yaml:"redis_client_auth"`
	// RedisServerAuth maps servers, by name (or address when unnamed), to
	// the password the proxy gives them with AUTH, in place of
	// RedisAuth's; an empty one sends no AUTH. In a pool on a membership
	// source it may name servers the source does not list (yet): each
	// applies when its server appears.
	RedisServerAuth map[string]string `yaml:"redis_server_auth"`
	// RedisServerUser is the ACL user (Redis 6 and later) the proxy
	// authenticates as with every server, with the server's password:
	// AUTH user password, and MIGRATE's AUTH2. Empty: AUTH with the
	// password alone, as the default user.
	RedisServerUser string `yaml:"redis_server_user"`
	// Warm (warm) applies changes of placement warm: see [Warm].
	Warm Warm `yaml:"-"`
	// Sweep (sweep) removes the copies a change leaves on servers that
	// no longer own them: see [Sweep].
	Sweep Sweep `yaml:"sweep"`
	// Store (store) makes a Redis pool a store, whose changes move its
	// keys to their new servers: see [Store].
	Store Store `yaml:"store"`
	// TLS (tls) makes the pool's listener speak TLS: see [ClientTLS].
	TLS *ClientTLS `yaml:"tls"`
	// ServerTLS (server_tls) reaches the servers over TLS: see
	// [ServerTLS].
	ServerTLS *ServerTLS `yaml:"server_tls"`
	// ReplicaReads (replica_reads) sends a Sentinel pool's reads to its
	// shards' replicas: see [ReplicaReads].
	ReplicaReads ReplicaReads `yaml:"replica_reads"`
	// RedisCluster (redis_cluster) presents the pool's proxies to Redis
	// Cluster clients as a cluster: see [RedisCluster].
	RedisCluster RedisCluster `yaml:"redis_cluster"`
	// Traffic (traffic) samples the pool's traffic: see [Traffic].
	Traffic Traffic `yaml:"traffic"`
	// HotKeys (hot_keys) answers the hottest keys from the proxy: see
	// [HotKeys].
	HotKeys HotKeys `yaml:"hot_keys"`
}

// ReplicaReads configures reads from replicas in a Redis pool on Sentinel
// (membership: {sentinel: ...}): a read-only command of one shard goes to
// a replica of it, one the Sentinels list, that is no further behind its
// primary than MaxLag, and to the primary when none is; a client that
// wrote to a shard reads that shard from its primary for the rest of its
// connection, so that it reads its own writes. Off by default: every
// request goes to the primary.
type ReplicaReads struct {
	// Enabled (enabled) turns replica reads on.
	Enabled bool `yaml:"enabled"`
	// MaxLag (max_lag), in milliseconds, is how far behind its primary a
	// replica may be and still be read: the time since the replica last
	// held everything its primary had written, measured every 100 ms
	// from their INFO replication offsets. Default 1000.
	MaxLag int `yaml:"max_lag"`
}

// Store configures a Redis pool whose servers hold data, not copies of
// it: a change of its servers (a reload, a membership source) moves each
// key whose owner changes from the server that holds it to its new one,
// with MIGRATE, while the pool serves. A request for a key that may not
// have moved yet moves it first, so that every key is found in one place,
// and a mover goes through the servers for the rest (see
// migration_store.go). Off by default: a Redis pool's change is then
// cold, as nutcracker's, and the keys that change owner are not found.
type Store struct {
	// Enabled (enabled) makes the pool a store.
	Enabled bool `yaml:"enabled"`
	// Rate (rate) is the most keys per second the mover moves from one
	// server: a ceiling over the pace the clients' latency sets (see
	// LatencyBound). Default 0: none. Requests move their own keys
	// whatever it is.
	Rate int `yaml:"rate"`
	// Batch (batch) is the most keys one MIGRATE of the mover moves.
	// Default 0: the mover sizes its batches from the time the last ones
	// took, so that one holds its server for about a millisecond, up to
	// 1000 keys.
	Batch int `yaml:"batch"`
	// LatencyBound (latency_bound), in milliseconds, is the clients' p99
	// the mover keeps under: it halves its MIGRATEs at once when a tenth
	// of a second's p99 passes it, and adds to them while it stays under.
	// Default 0: twice the p99 of the pool's requests before the move (at
	// least 1 ms).
	LatencyBound int `yaml:"latency_bound"`
	// Hours (hours) is the daily window in which the mover runs,
	// "HH:MM-HH:MM" in the proxy's time zone, the end not in it: the
	// mover waits outside it (requests still move their own keys).
	// Default "": every hour.
	Hours string `yaml:"hours"`
	// MigrateTimeout (migrate_timeout), in milliseconds, is MIGRATE's
	// timeout: the longest the transfer of a key may stall. Default 5000.
	// A pool on Sentinels asks for a twelfth of their
	// down-after-milliseconds for the source's master at most: a MIGRATE
	// blocks its source while it waits, and a source blocked that long
	// is failed over (see storeMover.migrateTimeout).
	MigrateTimeout int `yaml:"migrate_timeout"`
	// BigKeyElements (big_key_elements) and BigKeyBytes (big_key_bytes)
	// bound the keys that move with one MIGRATE, which holds its server
	// until the new one has the key whole (some 5 µs an element): a
	// hash, set, sorted set, list or stream of more elements or bytes
	// (MEMORY USAGE), or a string of more bytes, is copied piece by
	// piece instead, its writes held meanwhile (see
	// redis_store_big.go). Defaults 1000 and 1 MiB: a few milliseconds
	// of a server's time at most.
	BigKeyElements int `yaml:"big_key_elements"`
	BigKeyBytes    int `yaml:"big_key_bytes"`
}

// Warm configures warm changes. When a change of placement moves keys (a
// reload that adds, removes, re-weights or readdresses servers; a server
// restored under rehash; for ketama and modula, a server ejected), the
// pool keeps the placements it replaced for a migration window: a read
// that misses at a key's new server is answered from the server that held
// it before, and the value copied to the new one with its remaining TTL
// and flags; a write or delete goes to the new server and deletes the
// previous server's copy. In the file, window is in milliseconds.
type Warm struct {
	// Enabled (enabled) turns warm changes on or off. Default: on for
	// kolco's distributions with one copy of each key; off for ketama and
	// modula, which keep nutcracker's behaviour unless asked (one server
	// per request, as nutcracker chooses it), and with replicas and in
	// Redis pools, which it is not combined with (it is refused there).
	Enabled *bool
	// Window (window) is the longest a migration window stays open.
	// Default 10 minutes.
	Window time.Duration
	// Depth (depth) is how many previous placements a read falls back
	// through when a change comes within the window of another, newest
	// first. Default 2; at most 8.
	Depth int
	// Quiet (quiet) ends a window before its time once that many
	// fallback reads in a row found nothing at the previous servers.
	// Default 1000.
	Quiet int
}

// on reports whether warm changes are on (for a configuration with its
// defaults).
func (w Warm) on() bool { return w.Enabled != nil && *w.Enabled }

// maxWarmDepth bounds Warm.Depth.
const maxWarmDepth = 8

// Sweep configures the sweep: after a change's migration window closes
// (at once when warm changes are off), the servers the configuration
// marks as this pool's alone are listed ("lru_crawler metadump all") and
// every key a server no longer owns is deleted with the CAS value listed
// ("md <key> C<cas>"), so that a value written since is never deleted and
// a later change cannot serve a stale copy.
type Sweep struct {
	// Exclusive (exclusive) names the servers, by name or address, that
	// hold this pool's keys and nothing else; "*" names them all. Only
	// they are swept: on a server shared with another pool, or with
	// another proxy's pools, their keys would be taken for orphans. An
	// exclusive server added by a reload is emptied (flush_all) before it
	// takes keys: one that served the pool before would otherwise serve
	// values from before it left. Default none: no sweep. The file may
	// give one name alone, as in exclusive: "*".
	Exclusive ServerNames `yaml:"exclusive"`
	// Rate (rate) is the most deletes per second sent to one server.
	// Default 1000.
	Rate int `yaml:"rate"`
}

// exclusive reports whether the configuration marks the server n as this
// pool's alone, by its name (its node's ID) or address.
func (p *PoolConfig) exclusive(n kolco.Node) bool {
	for _, e := range p.Sweep.Exclusive {
		if e == "*" || e == n.ID || e == n.Addr {
			return true
		}
	}
	return false
}

// maxReplicas bounds Replicas.
const maxReplicas = 8

// HealthCheck configures active probes ("version") of failed servers; in
// the file, its durations are in milliseconds.
type HealthCheck struct {
	// Interval (interval) between probes of a failed server; default
	// ServerRetryTimeout. Negative disables probes: a server then returns
	// ServerRetryTimeout after it was marked down, as in twemproxy.
	Interval time.Duration
	// Timeout (timeout) of one probe; default the pool's Timeout.
	Timeout time.Duration
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

// PoolNames returns the pool names, sorted.
func (c *Config) PoolNames() []string {
	names := make([]string, 0, len(c.Pools))
	for n := range c.Pools {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// zoneOf returns the zone of a server, by name or else by address.
func (p *PoolConfig) zoneOf(s twemproxy.Server) string {
	if z, ok := p.Zones[s.RingName()]; ok {
		return z
	}
	return p.Zones[s.Addr()]
}

// nodes returns the pool's servers as the nodes of its placement: named
// as twemproxy names them (the name given, else the address), weighted as
// configured, with their zones. Addr is payload, never hashed: a named
// server given a new address keeps its keys.
func (p *PoolConfig) nodes() []kolco.Node {
	nodes := make([]kolco.Node, len(p.Servers))
	for i, s := range p.Servers {
		nodes[i] = kolco.Node{ID: s.RingName(), Weight: float64(max(s.Weight, 1)), Addr: s.Addr(), Zone: p.zoneOf(s)}
	}
	return nodes
}

// distRandom is twemproxy's random distribution (see randomPicker).
const distRandom = twemproxy.Random

// isTwemproxy reports whether the pool is placed by twemproxy's own
// distributions, which keep nutcracker's semantics: a rebuild over the
// servers not down.
func isTwemproxy(cfg *PoolConfig) bool {
	return cfg.Distribution == twemproxy.Ketama || cfg.Distribution == twemproxy.Modula || cfg.Distribution == twemproxy.Random
}
