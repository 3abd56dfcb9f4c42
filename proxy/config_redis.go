package proxy

import (
	"fmt"
	"strings"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/proxy/redis"
)

// checkRedis checks the Redis settings: given only to a Redis pool, and
// in a Redis pool only the settings that mean something for Redis.
func (p *PoolConfig) checkRedis(bad badSetting) error {
	if err := p.checkStore(bad); err != nil {
		return err
	}
	if err := p.checkReplicaReads(bad); err != nil {
		return err
	}
	if err := p.RedisCluster.check(p.Redis, bad); err != nil {
		return err
	}
	if !p.Redis {
		for _, k := range []struct {
			key string
			set bool
		}{
			// redis_db is not among them: nutcracker takes it in a
			// memcached pool and ignores it (see ignoredSettings).
			{"redis_auth", p.RedisAuth != ""},
			{"redis_client_auth", p.RedisClientAuth != ""}, {"redis_server_auth", len(p.RedisServerAuth) > 0},
			{"redis_server_user", p.RedisServerUser != ""},
			{"redis_blocking_connections", p.RedisBlockingConnections != 0},
		} {
			if k.set {
				return bad(k.key, "applies to Redis pools only (redis: true)")
			}
		}
		return nil
	}
	switch {
	case p.RedisServerUser != "" && p.RedisAuth == "" && len(p.RedisServerAuth) == 0:
		return bad("redis_server_user", "an ACL user authenticates with a password: give it in redis_auth or redis_server_auth")
	case strings.ContainsAny(p.RedisServerUser, " \t\r\n"):
		return bad("redis_server_user", "%q: a user name has no spaces", p.RedisServerUser)
	case p.RedisDB < 0:
		return bad("redis_db", "must not be negative (got %d)", p.RedisDB)
	case p.RedisBlockingConnections < 0:
		return bad("redis_blocking_connections", "must not be negative (got %d)", p.RedisBlockingConnections)
	case p.Replicas > 1:
		return bad("replicas", "a Redis pool keeps one copy of each key: copies written by a proxy would drift apart under Redis's read-modify-write commands (INCR, LPUSH, ...)")
	case len(p.Zones) > 0 || p.Zone != "":
		return bad("zones", "zones place the copies of a key, and a Redis pool keeps one")
	case p.Warm.on():
		return bad("warm.enabled", "warm changes move values with memcached's meta commands; a Redis pool's changes are cold, as nutcracker's: set warm: {enabled: false}")
	case len(p.Sweep.Exclusive) > 0:
		return bad("sweep.exclusive", "the sweep lists a server's keys with memcached's lru_crawler metadump; a Redis pool is not swept")
	case p.MaxValueSize > redis.DefaultMaxBulk:
		return bad("max_value_size", "at most %d in a Redis pool, the server's largest bulk string (got %d)", redis.DefaultMaxBulk, p.MaxValueSize)
	}
	return p.checkServerAuth(bad)
}

// checkServerAuth checks that redis_server_auth names each server at most
// once, by name or address. A pool on a membership source is checked
// against each version of its servers, which may not list a server named
// there yet, or any more: an entry for a server not in the version waits
// for it to appear, and one given by its name and by its address gets the
// name's password (see serverPassword), so that no version is refused for
// them.
func (p *PoolConfig) checkServerAuth(bad badSetting) error {
	if p.Membership != nil {
		return nil
	}
	known := map[string]int{}
	for i, s := range p.Servers {
		known[s.RingName()], known[s.Addr()] = i+1, i+1
	}
	given := map[int]string{}
	for server := range p.RedisServerAuth {
		i := known[server]
		if i == 0 {
			return bad("redis_server_auth", "%q is not a server's name or address", server)
		}
		if other, twice := given[i]; twice {
			return bad("redis_server_auth", "server %d is given a password twice, as %q and as %q", i, other, server)
		}
		given[i] = server
	}
	return nil
}

// clientPassword returns the password a Redis pool's clients must give
// with AUTH, or "" when they need not authenticate.
func (p *PoolConfig) clientPassword() string {
	if p.RedisClientAuth != "" {
		return p.RedisClientAuth
	}
	return p.RedisAuth
}

// serverAuth returns the arguments of the AUTH the proxy sends the Redis
// server n on connecting ("user", "password" or "password"), or nil.
func (p *PoolConfig) serverAuth(n kolco.Node) []string {
	pw := p.serverPassword(n)
	switch {
	case pw == "":
		return nil
	case p.RedisServerUser != "":
		return []string{p.RedisServerUser, pw}
	}
	return []string{pw}
}

// serverPassword returns the password the proxy gives the Redis server n
// with AUTH on connecting, or "" for none.
func (p *PoolConfig) serverPassword(n kolco.Node) string {
	if pw, ok := p.RedisServerAuth[n.ID]; ok {
		return pw
	}
	if pw, ok := p.RedisServerAuth[n.Addr]; ok {
		return pw
	}
	return p.RedisAuth
}

// protocol names the pool's protocol.
func (p *PoolConfig) protocol() string {
	if p.Redis {
		return "redis"
	}
	return "memcached"
}

// errorName names the reply a client gets for a failed server.
func (p *PoolConfig) errorName() string {
	if p.Redis {
		return "-ERR"
	}
	return "SERVER_ERROR"
}

// probeName names the request that probes a server.
func (p *PoolConfig) probeName() string {
	if p.Redis {
		return "PING"
	}
	return "version"
}

// explainRedis writes what a Redis pool does about passwords, databases
// and changes of placement, for [Config.Explain].
func (p *PoolConfig) explainRedis(b *strings.Builder) {
	auth := "clients need no password"
	if p.clientPassword() != "" {
		auth = "clients must give the pool's password with AUTH first"
	}
	servers := 0
	for _, n := range p.nodes() {
		if p.serverPassword(n) != "" {
			servers++
		}
	}
	db := "database 0"
	if p.RedisDB > 0 {
		db = fmt.Sprintf("SELECT %d on every server connection", p.RedisDB)
	}
	fmt.Fprintf(b, "  redis: %s; AUTH sent to %d of %d servers on connecting; %s; a restored server is never emptied\n",
		auth, servers, len(p.Servers), db)
	if r := p.ReplicaReads; r.Enabled {
		fmt.Fprintf(b, "  reads: from a replica no more than %d ms behind its primary (the Sentinels list the replicas; lag measured every 100 ms), else the primary; a client that wrote to a shard reads it from the primary from then on\n", r.MaxLag)
	}
	if s := p.Store; s.Enabled {
		fmt.Fprintf(b, "  changes: a store's: the keys a change gives another server move there with MIGRATE while the pool serves, from every server at once, %s, %s, %s, %s (timeout %d ms); a key of more than %d elements or %d bytes moves piece by piece instead, its writes waiting for it; a request for a key not moved yet moves it first, and a read finds every key; no key moves before every proxy named in kolco.admin_peers places by the new servers; progress in /v1/pools and the state file\n",
			storeExplainHours(s), storeExplainBound(s), storeExplainRate(s), storeExplainBatch(s), s.MigrateTimeout, s.BigKeyElements, s.BigKeyBytes)
		return
	}
	fmt.Fprintf(b, "  changes: cold, as under nutcracker: a key a change moves is not found at its new server until it is written there; its old copy stays where it was (warm changes and the sweep are for memcached pools; store: {enabled: true} moves a Redis pool's keys)\n")
}

// checkReplicaReads checks replica_reads: a Sentinel pool's, which knows
// its shards' replicas, and not a store's, whose moves a replica would not
// see in time.
func (p *PoolConfig) checkReplicaReads(bad badSetting) error {
	switch r := p.ReplicaReads; {
	case r.MaxLag < 0:
		return bad("replica_reads.max_lag", "must not be negative (got %d)", r.MaxLag)
	case !r.Enabled:
		return nil
	case !p.Redis || p.Membership == nil || p.Membership.Sentinel == nil:
		return bad("replica_reads.enabled", "reads go to the replicas Sentinel lists: it applies to Redis pools on Sentinel (redis: true, membership: {sentinel: ...})")
	case p.Store.Enabled:
		return bad("replica_reads.enabled", "a store's move deletes each key at its old primary as it moves: a replica read could miss it at both; read a store from its primaries")
	}
	return nil
}

func storeExplainBound(s Store) string {
	if s.LatencyBound > 0 {
		return fmt.Sprintf("paced to keep the clients' p99 under %d ms", s.LatencyBound)
	}
	return "paced to keep the clients' p99 under twice its value before the move (at least 1 ms)"
}

func validHours(s string) error {
	_, err := parseHours(s)
	return err
}

func storeExplainHours(s Store) string {
	h, _ := parseHours(s.Hours)
	if !h.set {
		return "at any hour"
	}
	return "only between " + strings.Replace(h.String(), "-", " and ", 1) + " (the proxy's time zone)"
}

func storeExplainRate(s Store) string {
	if s.Rate > 0 {
		return fmt.Sprintf("at most %d keys a second from each server", s.Rate)
	}
	return "no ceiling of keys a second"
}

func storeExplainBatch(s Store) string {
	if s.Batch > 0 {
		return fmt.Sprintf("batches sized from their measured time, at most %d keys per MIGRATE", s.Batch)
	}
	return "batches sized from their measured time (about 1 ms of the server's each, at most 1000 keys)"
}

// checkStore checks a store's settings: a Redis pool whose servers keep
// their keys when they fail.
func (p *PoolConfig) checkStore(bad badSetting) error {
	switch s := p.Store; {
	case s.Rate < 0:
		return bad("store.rate", "must not be negative (got %d)", s.Rate)
	case s.Batch < 0:
		return bad("store.batch", "must not be negative (got %d)", s.Batch)
	case validHours(s.Hours) != nil:
		return bad("store.hours", "%v (got %q)", validHours(s.Hours), s.Hours)
	case s.LatencyBound < 0:
		return bad("store.latency_bound", "must not be negative (got %d)", s.LatencyBound)
	case s.MigrateTimeout < 0:
		return bad("store.migrate_timeout", "must not be negative (got %d)", s.MigrateTimeout)
	case s.BigKeyElements < 0:
		return bad("store.big_key_elements", "must not be negative (got %d)", s.BigKeyElements)
	case s.BigKeyBytes < 0:
		return bad("store.big_key_bytes", "must not be negative (got %d)", s.BigKeyBytes)
	case !s.Enabled:
		return nil
	case !p.Redis:
		return bad("store.enabled", "a store moves its keys with Redis's MIGRATE: it applies to Redis pools (redis: true); a memcached pool's changes are warm")
	case p.Ejection == EjectRehash:
		return bad("store.enabled", "a store's server that fails keeps its keys, which must not move to other servers meanwhile: set auto_eject_hosts: false, or ejection: fail-fast")
	case p.Membership != nil && p.Membership.Etcd == nil && historyDependent(p.Distribution):
		return bad("store.enabled", "distribution %s places keys by the order of changes, and a %s source keeps no history: a proxy started again "+
			"places keys by the changes it sees from then, apart from the fleet, and reads a key where it is not; keep the history in etcd "+
			"(membership: {etcd: ...}), or use a distribution whose placement is the servers' (ring, rendezvous, maglev, ketama)",
			p.Distribution, strings.Fields(p.Membership.String())[0])
	}
	return nil
}

// historyDependent reports whether distribution is one of kolco's whose
// placement depends on the order of changes.
func historyDependent(distribution string) bool {
	info, ok := algo.Lookup(distribution)
	return ok && info.HistoryDependent
}

// ignoredSettings returns the settings of the pool that nutcracker accepts
// and ignores, and so does the proxy, each with why: redis_db in a
// memcached pool. The start logs them and --check lists them, so that a
// file that means something else is noticed.
func (p *PoolConfig) ignoredSettings() []string {
	var out []string
	if !p.Redis && p.RedisDB != 0 {
		out = append(out, fmt.Sprintf("redis_db %d: a memcached pool has no databases", p.RedisDB))
	}
	return out
}
