package proxy

import (
	"errors"
	"net"
	"strconv"
)

// RedisCluster makes a Redis pool answer the clients of a Redis Cluster
// (go-redis's ClusterClient, redis-py's RedisCluster, redis-cli -c): the
// pool's proxies are the cluster's nodes, the 16384 hash slots spread over
// them in ranges, and each proxy serves every key whatever its slot. The
// servers behind are the pool's, placed by its hash as ever. See
// redis_cluster.go.
type RedisCluster struct {
	// Enabled (enabled) turns it on: CLUSTER SLOTS, SHARDS, NODES,
	// KEYSLOT, INFO, MYID, READONLY, READWRITE and ASKING are answered;
	// off, they are refused.
	Enabled bool `yaml:"enabled"`
	// Nodes (nodes) are the proxies of the fleet serving the pool, each
	// "host:port" as the clients reach it, this one among them. Empty
	// means this proxy alone, at Announce. A proxy that is not among its
	// own Nodes is leaving: it answers a keyed command with MOVED to its
	// slot's proxy, so that clients move off it before it goes.
	Nodes []string `yaml:"nodes"`
	// Announce (announce) is this proxy's "host:port" as the clients
	// reach it. Empty means the address each client connected to.
	Announce string `yaml:"announce"`
}

// nodesFor returns the nodes and this proxy's address among them, for a
// client that reached the proxy at local.
func (rc *RedisCluster) nodesFor(local string) (nodes []string, self string) {
	self = rc.Announce
	if self == "" {
		self = local
	}
	if len(rc.Nodes) == 0 {
		return []string{self}, self
	}
	return rc.Nodes, self
}

// maxClusterNodes bounds redis_cluster.nodes: each needs a slot at least.
const maxClusterNodes = 16384

// check checks redis_cluster in a pool; redis says whether it is a Redis
// pool.
func (rc *RedisCluster) check(redis bool, bad badSetting) error {
	switch {
	case !rc.Enabled && (len(rc.Nodes) > 0 || rc.Announce != ""):
		return bad("redis_cluster.enabled", "nodes and announce are set but enabled is not: set enabled: true")
	case !rc.Enabled:
		return nil
	case !redis:
		return bad("redis_cluster", "applies to Redis pools only (redis: true)")
	case len(rc.Nodes) > maxClusterNodes:
		return bad("redis_cluster.nodes", "at most %d, one hash slot each (got %d)", maxClusterNodes, len(rc.Nodes))
	}
	seen := map[string]bool{}
	for _, n := range append([]string{rc.Announce}, rc.Nodes...) {
		if n == "" && !seen[n] {
			seen[n] = true // Announce not given
			continue
		}
		if err := checkClusterAddr(n); err != nil {
			return bad("redis_cluster", "%q: %v", n, err)
		}
		if seen[n] && n != rc.Announce {
			return bad("redis_cluster.nodes", "%q is listed twice", n)
		}
		seen[n] = true
	}
	return nil
}

// checkClusterAddr checks a node's address: a host and a port, as a
// cluster client dials it.
func checkClusterAddr(a string) error {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return err
	}
	if host == "" {
		return errNoClusterHost
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return errBadClusterPort
	}
	return nil
}

var (
	errNoClusterHost  = errors.New("a cluster node needs a host its clients can reach, not only a port")
	errBadClusterPort = errors.New("a cluster node's port is a number from 1 to 65535")
)
