package proxy

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/kolco-dev/kolco/proxy/redis"
	"github.com/kolco-dev/kolco/slots"
)

// Cluster clients (see RedisCluster). A pool with redis_cluster presents
// its proxies as a Redis Cluster: CLUSTER SLOTS, SHARDS and NODES list the
// proxies of redis_cluster.nodes (this one alone when none are given) as
// masters, the 16384 slots spread over them in ranges of about 16384/n in
// the order of their addresses, so that every proxy of the fleet gives the
// same map whichever a client asks. Each proxy serves every key, whatever
// its slot: a cluster client spreads its connections over the proxies by
// the map, and one whose map is stale (a proxy added since) or a client
// that is not a cluster client loses nothing - its requests are served
// where they land. A client needs a MOVED only when its map points at a
// proxy that is going away: a proxy that is not among its own nodes
// answers each keyed command with MOVED to its slot's proxy in the new
// list, so that cluster clients learn the new map (from CLUSTER SLOTS
// there) and leave it before it stops.
//
// Overlord (bilibili) fronts a real Redis Cluster and answers CLUSTER
// NODES and SLOTS with three fake nodes that all have the proxy's own
// address; mithril (projecteru2) answers CLUSTER with one virtual node, the
// proxy, owning slots 0-16383. Both make a cluster client talk to one
// proxy: its connections do not spread over a fleet, a proxy that goes away
// takes its clients' map with it, and there is no MOVED to tell them. Here
// the slots are the fleet's, so cluster clients spread over the proxies as
// over a cluster's masters, and the MOVED of a leaving proxy moves them.
// The slots do not say where keys are kept - the pool's placement does,
// over the servers behind - so the commands that count or list the keys of
// a slot (COUNTKEYSINSLOT, GETKEYSINSLOT) and the ones that change a
// cluster (ADDSLOTS, MEET, FAILOVER, ...) are refused.

// cmdCluster and the commands a cluster client sends on its connections,
// looked up once.
var (
	cmdCluster   = redis.Lookup("cluster")
	cmdAsking    = redis.Lookup("asking")
	cmdReadOnly  = redis.Lookup("readonly")
	cmdReadWrite = redis.Lookup("readwrite")
)

// clusterCommand reports whether cmd is answered by a pool with
// redis_cluster.
func clusterCommand(cmd *redis.Command) bool {
	return cmd == cmdCluster || cmd == cmdAsking || cmd == cmdReadOnly || cmd == cmdReadWrite
}

// clusterView is the cluster a pool presents to one client: the proxies,
// sorted, and which of them this one is to the client (-1: it is leaving).
type clusterView struct {
	nodes []string
	self  int
}

// newClusterView returns the cluster of nodes a client sees whose proxy
// is self among them.
func newClusterView(nodes []string, self string) *clusterView {
	v := &clusterView{nodes: slices.Sorted(slices.Values(nodes))}
	v.self = slices.Index(v.nodes, self)
	return v
}

// first returns the first slot of node i; first(len(nodes)) is 16384.
func (v *clusterView) first(i int) int { return i * slots.DefaultCount / len(v.nodes) }

// owner returns the node whose range holds slot.
func (v *clusterView) owner(slot int) int {
	i := slot * len(v.nodes) / slots.DefaultCount
	for v.first(i+1) <= slot {
		i++
	}
	for v.first(i) > slot {
		i--
	}
	return i
}

// moved returns the MOVED reply for key when this proxy is leaving, nil
// when it serves the key.
func (v *clusterView) moved(key []byte) []byte {
	if v.self >= 0 {
		return nil
	}
	slot := slots.KeySlot(string(key))
	return redis.AppendError(nil, fmt.Sprintf("MOVED %d %s", slot, v.nodes[v.owner(slot)]))
}

// nodeID is a node's ID: 40 hex digits, the SHA-1 of its address, so that
// every proxy gives a node the same ID and a node keeps it across
// restarts.
func nodeID(addr string) string {
	sum := sha1.Sum([]byte(addr))
	return hex.EncodeToString(sum[:])
}

// hostPort splits a node's address; its port is a number (see
// checkClusterAddr).
func hostPort(addr string) (string, int64) {
	host, port, _ := net.SplitHostPort(addr)
	n, _ := strconv.ParseInt(port, 10, 64)
	return host, n
}

// answer answers CLUSTER, ASKING, READONLY and READWRITE: the last three
// +OK (a proxy serves every key, and reads where the pool's settings say),
// in proto.
func (v *clusterView) answer(dst []byte, req *redis.Request, proto redis.Proto) []byte {
	if req.Cmd != cmdCluster {
		return redis.AppendOK(dst)
	}
	args := req.Args
	sub := strings.ToLower(string(args[1]))
	switch {
	case sub == "slots" && len(args) == 2:
		return v.appendSlots(dst, proto)
	case sub == "shards" && len(args) == 2:
		return v.appendShards(dst, proto)
	case sub == "nodes" && len(args) == 2:
		return redis.AppendVerbatim(dst, v.nodesText(), proto)
	case sub == "info" && len(args) == 2:
		return redis.AppendVerbatim(dst, v.infoText(), proto)
	case sub == "myid" && len(args) == 2 && v.self >= 0:
		return redis.AppendBulkString(dst, nodeID(v.nodes[v.self]))
	case sub == "keyslot" && len(args) == 3:
		return redis.AppendInt(dst, int64(slots.KeySlot(string(args[2]))))
	case sub == "help" && len(args) == 2:
		dst = redis.AppendArrayHeader(dst, len(clusterHelp))
		for _, l := range clusterHelp {
			dst = redis.AppendSimpleString(dst, l)
		}
		return dst
	}
	return redis.AppendError(dst, "ERR 'cluster|"+sub+"' is not supported by the proxy: the proxies' slots say which proxy a cluster client asks, not where keys are kept; try CLUSTER HELP")
}

var clusterHelp = []string{
	"CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands the proxy answers:",
	"SLOTS", "    The proxies of the pool's fleet and the slots each serves.",
	"SHARDS", "    The same, as shards of one master each.",
	"NODES", "    The same, in CLUSTER NODES's lines.",
	"INFO", "    The cluster's state: ok, every slot assigned.",
	"MYID", "    This proxy's node ID.",
	"KEYSLOT <key>", "    The hash slot of <key>.",
	"HELP", "    Print this help.",
}

// appendSlots appends CLUSTER SLOTS: a range per proxy, each with its
// host, port, ID and no metadata, as redis-server 7.0 writes them.
func (v *clusterView) appendSlots(dst []byte, proto redis.Proto) []byte {
	dst = redis.AppendArrayHeader(dst, len(v.nodes))
	for i, n := range v.nodes {
		host, port := hostPort(n)
		dst = redis.AppendArrayHeader(dst, 3)
		dst = redis.AppendInt(redis.AppendInt(dst, int64(v.first(i))), int64(v.first(i+1)-1))
		dst = redis.AppendArrayHeader(dst, 4)
		dst = redis.AppendInt(redis.AppendBulkString(dst, host), port)
		dst = redis.AppendMapHeader(redis.AppendBulkString(dst, nodeID(n)), 0, proto)
	}
	return dst
}

// appendShards appends CLUSTER SHARDS: a shard per proxy, its master the
// proxy.
func (v *clusterView) appendShards(dst []byte, proto redis.Proto) []byte {
	dst = redis.AppendArrayHeader(dst, len(v.nodes))
	for i, n := range v.nodes {
		host, port := hostPort(n)
		dst = redis.AppendMapHeader(dst, 2, proto)
		dst = redis.AppendArrayHeader(redis.AppendBulkString(dst, "slots"), 2)
		dst = redis.AppendInt(redis.AppendInt(dst, int64(v.first(i))), int64(v.first(i+1)-1))
		dst = redis.AppendArrayHeader(redis.AppendBulkString(dst, "nodes"), 1)
		dst = redis.AppendMapHeader(dst, 7, proto)
		for _, kv := range [][2]string{{"id", nodeID(n)}} {
			dst = redis.AppendBulkString(redis.AppendBulkString(dst, kv[0]), kv[1])
		}
		dst = redis.AppendInt(redis.AppendBulkString(dst, "port"), port)
		for _, kv := range [][2]string{{"ip", host}, {"endpoint", host}, {"role", "master"}} {
			dst = redis.AppendBulkString(redis.AppendBulkString(dst, kv[0]), kv[1])
		}
		dst = redis.AppendInt(redis.AppendBulkString(dst, "replication-offset"), 0)
		dst = redis.AppendBulkString(redis.AppendBulkString(dst, "health"), "online")
	}
	return dst
}

// nodesText is CLUSTER NODES's text: a line per proxy, "myself" on this
// one's, no cluster bus (port 0).
func (v *clusterView) nodesText() string {
	var b strings.Builder
	for i, n := range v.nodes {
		flags := "master"
		if i == v.self {
			flags = "myself,master"
		}
		fmt.Fprintf(&b, "%s %s@0 %s - 0 0 0 connected %d-%d\n", nodeID(n), n, flags, v.first(i), v.first(i+1)-1)
	}
	return b.String()
}

// infoText is CLUSTER INFO's text: a healthy cluster of the proxies, at
// epoch 0 as a cluster that never failed over.
func (v *clusterView) infoText() string {
	n := len(v.nodes)
	var b strings.Builder
	for _, kv := range []struct {
		k string
		v int
	}{
		{"cluster_state:ok", -1}, {"cluster_slots_assigned", slots.DefaultCount}, {"cluster_slots_ok", slots.DefaultCount},
		{"cluster_slots_pfail", 0}, {"cluster_slots_fail", 0}, {"cluster_known_nodes", n}, {"cluster_size", n},
		{"cluster_current_epoch", 0}, {"cluster_my_epoch", 0}, {"cluster_stats_messages_sent", 0},
		{"cluster_stats_messages_received", 0}, {"total_cluster_links_buffer_limit_exceeded", 0},
	} {
		b.WriteString(kv.k)
		if kv.v >= 0 {
			b.WriteString(":" + strconv.Itoa(kv.v))
		}
		b.WriteString("\r\n")
	}
	return b.String()
}

// cluster returns the cluster p presents to the client, nil when p does
// not answer cluster clients; it is kept while the client's pool is p.
func (cs *redisConnState) cluster(p *pool) *clusterView {
	if !p.cfg.RedisCluster.Enabled {
		return nil
	}
	if cs.clusterOf != p {
		cs.clusterOf, cs.view = p, newClusterView(p.cfg.RedisCluster.nodesFor(cs.c.conn.LocalAddr().String()))
	}
	return cs.view
}

// moved returns the MOVED reply to req when this proxy is leaving, nil
// otherwise; p answers cluster clients (the caller checks).
func (cs *redisConnState) moved(p *pool, req *redis.Request) []byte {
	if req.NumKeys() == 0 {
		return nil
	}
	return cs.cluster(p).moved(req.Key(0))
}
