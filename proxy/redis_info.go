package proxy

import (
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// INFO through the proxy: what a client asks INFO for is either the
// proxy's own or the pool's servers' together, section by section.
//   - Server, Clients, Replication and Cluster are the proxy's: the Redis
//     version its table follows, its mode (cluster with redis_cluster),
//     its process and port; the listener's clients and those blocked; a
//     master with no replicas (the proxy's clients see no replica); and
//     whether it answers cluster clients. A server's own would describe a
//     connection the client does not have.
//   - Memory, Persistence, Stats and Keyspace are the servers', merged:
//     a whole number is summed over the servers (used_memory, keys,
//     keyspace_hits, ...), a flag (loading, a save in progress) is 1 when
//     any server's is, and any other field is kept when every server
//     gives the same and dropped otherwise (a ratio, a policy that
//     differs). Keyspace is the pool's database's, shown as db0, as the
//     clients see it, its avg_ttl weighted by each server's expiring keys.
//   - CPU, Commandstats, Errorstats, Latencystats and Modules are one
//     server's each, meaningless summed: not given.
//
// ioredis checks loading:0 and redis-py's RedisCluster cluster_enabled:1
// before they go on; a monitoring agent reads used_memory and the keys.

// infoSections are the sections the proxy gives, in INFO's order; the
// servers' among them are asked of every server.
var infoSections = []string{"server", "clients", "memory", "persistence", "stats", "replication", "cluster", "keyspace"}

// serversSection reports whether a section is the servers', merged.
func serversSection(s string) bool {
	return s == "memory" || s == "persistence" || s == "stats" || s == "keyspace"
}

// infoFlags are the fields that say whether something is under way or
// on: 1 when any server's is.
var infoFlags = map[string]bool{
	"loading": true, "async_loading": true, "rdb_bgsave_in_progress": true, "aof_enabled": true,
	"aof_rewrite_in_progress": true, "aof_rewrite_scheduled": true, "module_fork_in_progress": true,
}

// redisInfo answers INFO [section ...] for a client of p that speaks
// proto and reached the proxy at local.
func redisInfo(p *pool, r *redisRequest, proto redis.Proto, local net.Addr, peers []*client) {
	want := map[string]bool{}
	for _, a := range r.req.Args[1:] {
		switch s := strings.ToLower(string(a)); s {
		case "all", "everything", "default":
			for _, s := range infoSections {
				want[s] = true
			}
		default:
			want[s] = true
		}
	}
	if len(r.req.Args) == 1 {
		for _, s := range infoSections {
			want[s] = true
		}
	}
	var servers []serverInfo
	var ask []string
	for _, s := range infoSections {
		if want[s] && serversSection(s) {
			ask = append(ask, s)
		}
	}
	if len(ask) > 0 {
		var err error
		if servers, err = serversInfo(p, ask); err != nil {
			r.answerError(err)
			return
		}
	}
	var b strings.Builder
	for _, s := range infoSections {
		if !want[s] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		fmt.Fprintf(&b, "# %s\r\n", strings.ToUpper(s[:1])+s[1:])
		for _, kv := range infoFields(s, p, servers, local, peers) {
			b.WriteString(kv[0] + ":" + kv[1] + "\r\n")
		}
	}
	r.local = redis.AppendVerbatim(r.local, b.String(), proto)
}

// infoFields returns a section's fields, in order.
func infoFields(section string, p *pool, servers []serverInfo, local net.Addr, peers []*client) [][2]string {
	switch section {
	case "server":
		mode := "standalone"
		if p.cfg.RedisCluster.Enabled {
			mode = "cluster"
		}
		_, port, _ := net.SplitHostPort(local.String())
		return [][2]string{{"redis_version", helloVersion}, {"redis_mode", mode}, {"proxy", "kolco"},
			{"process_id", strconv.Itoa(os.Getpid())}, {"tcp_port", port}}
	case "clients":
		return [][2]string{{"connected_clients", strconv.Itoa(len(peers))},
			{"blocked_clients", strconv.FormatInt(redisStateOf(p).blocking.Load(), 10)}}
	case "replication":
		return [][2]string{{"role", "master"}, {"connected_slaves", "0"}}
	case "cluster":
		return [][2]string{{"cluster_enabled", strconv.Itoa(b2i(p.cfg.RedisCluster.Enabled))}}
	case "keyspace":
		return keyspaceFields(servers, "db"+strconv.Itoa(p.cfg.RedisDB))
	}
	return mergeFields(section, servers)
}

// serverInfo is one server's INFO: its fields by section-qualified
// name ("memory.used_memory"), and each section's names in order.
type serverInfo struct {
	vals  map[string]string
	names map[string][]string
}

// serversInfo asks every server of p for INFO of sections.
func serversInfo(p *pool, sections []string) ([]serverInfo, error) {
	args := [][]byte{[]byte("INFO")}
	for _, s := range sections {
		args = append(args, []byte(s))
	}
	req := redis.AppendArgs(nil, args)
	var out []serverInfo
	for _, b := range p.backends {
		reply, err := askShared(p, b, req)
		if err != nil {
			return nil, err
		}
		text, _, ok := redis.Bulk(reply)
		if !ok {
			return nil, serverError(b.addr, "INFO", fmt.Errorf("%w: %.80q", redis.ErrBadReply, reply))
		}
		si, section := serverInfo{vals: map[string]string{}, names: map[string][]string{}}, ""
		for _, line := range strings.Split(string(text), "\r\n") {
			if h, ok := strings.CutPrefix(line, "# "); ok {
				section = strings.ToLower(h)
				continue
			}
			if k, v, ok := strings.Cut(line, ":"); ok {
				si.vals[section+"."+k] = v
				si.names[section] = append(si.names[section], k)
			}
		}
		out = append(out, si)
	}
	return out, nil
}

// mergeFields merges a section of the servers' INFO (see the rules
// above), in the first server's order.
func mergeFields(section string, servers []serverInfo) [][2]string {
	if len(servers) == 0 {
		return nil
	}
	var out [][2]string
	for _, k := range servers[0].names[section] {
		if v, ok := mergeField(section+"."+k, infoFlags[k], servers); ok {
			out = append(out, [2]string{k, v})
		}
	}
	return out
}

// mergeField merges one field over the servers: summed whole numbers, a
// flag that is 1 when any is, or a value every server gives alike.
func mergeField(key string, flag bool, servers []serverInfo) (string, bool) {
	var sum int64
	numbers := true
	var vals []string
	for _, si := range servers {
		v, ok := si.vals[key]
		if !ok {
			return "", false
		}
		vals = append(vals, v)
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err != nil:
			numbers = false
		case flag:
			sum = max(sum, n)
		default:
			sum += n
		}
	}
	switch {
	case numbers:
		return strconv.FormatInt(sum, 10), true
	case len(slices.Compact(vals)) == 1:
		return vals[0], true
	}
	return "", false
}

// keyspaceFields is the pool's database (db, on the servers) summed over
// the servers, as db0.
func keyspaceFields(servers []serverInfo, db string) [][2]string {
	var keys, expires, ttlWeighted int64
	for _, si := range servers {
		f := map[string]int64{}
		for _, kv := range strings.Split(si.vals["keyspace."+db], ",") {
			k, v, _ := strings.Cut(kv, "=")
			f[k], _ = strconv.ParseInt(v, 10, 64)
		}
		keys, expires, ttlWeighted = keys+f["keys"], expires+f["expires"], ttlWeighted+f["expires"]*f["avg_ttl"]
	}
	if keys == 0 {
		return nil
	}
	avg := int64(0)
	if expires > 0 {
		avg = ttlWeighted / expires
	}
	return [][2]string{{"db0", fmt.Sprintf("keys=%d,expires=%d,avg_ttl=%d", keys, expires, avg)}}
}
