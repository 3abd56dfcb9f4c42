package faults

import (
	"fmt"
	"strings"
	"time"
)

// The pool's settings, the same for every combination: failures are
// found within a few hundred milliseconds and servers restored within a
// second, so that a schedule of a few seconds' faults ejects and restores
// servers many times.
const (
	poolTimeout  = 1000 * time.Millisecond
	retryTimeout = 1000 * time.Millisecond
	probeEvery   = 300 * time.Millisecond
	maxLag       = 1000 * time.Millisecond // replica reads' max_lag
	// sentinelDown is the Sentinels' down-after-milliseconds: 3 s,
	// because at 1 s a loaded machine (load 20 to 30 on 2 cores) kept
	// healthy primaries from answering for that long, and the Sentinels
	// failed them over while the proxies wrote to them - Redis's own
	// window of loss, which no proxy closes (seed 308: s0 and s1 failed
	// over with no fault on them, 24 keys' histories not linearizable).
	sentinelDown = 3000 * time.Millisecond
	poolName     = "p"
	etcdPrefix   = "/kolco/faults/"
	gossipKey    = "MDEyMzQ1Njc4OWFiY2RlZg==" // base64 of 0123456789abcdef
	// gossipProbe is the gossip members' probe interval, proxies' and
	// sidecars' alike, with memberlist's suspicion_mult of 4: a suspect
	// has 4 s to answer, the defaults docs/fleets.md measured without a
	// false death on a loaded machine. Tighter (200 ms, a suspect given
	// 0.8 s, or 1.6 s with 8) found live sidecars dead under load, and a
	// false death costs what a real one does (docs/fleets.md): for a Redis
	// cache a removal and an addition, two cold changes, the second moving
	// keys back to a server that held them - the limit the schedule leaves
	// out (limitColdTwice; the long run's seed 120 read 9 and 12 such
	// values, r3 found dead and back within 0.1 s). The schedule's changes
	// are joins and leaves, which no probe waits for.
	gossipProbe = time.Second
)

// configInput is what a proxy's configuration says.
type configInput struct {
	combo         Combo
	listen, admin string
	peers         []string    // every proxy's admin address
	servers       [][2]string // the members: address and name
	source        sourceInput
}

// sourceInput is where the pool's membership source is.
type sourceInput struct {
	membersFile, etcd, gossipBind, keyFile string
	gossipSeeds, sentinels                 []string
}

// proxyConfig returns proxy p's configuration: one pool over the run's
// members now.
func (r *run) proxyConfig(p *proxyProc) string {
	in := configInput{combo: r.combo, listen: p.listen, admin: p.admin,
		source: sourceInput{membersFile: r.membersFile, gossipBind: p.gossip, keyFile: r.keyFile, gossipSeeds: r.sidecars.seeds(r.topo.initial)}}
	for _, q := range r.proxies {
		in.peers = append(in.peers, q.admin)
	}
	for _, name := range r.members {
		in.servers = append(in.servers, [2]string{r.addrOf(name), name})
	}
	if r.etcd != nil {
		in.source.etcd = r.etcd.endpoint
	}
	in.source.sentinels = r.sentinels.addrs()
	return poolConfig(in)
}

// poolConfig writes a proxy's configuration.
func poolConfig(in configInput) string {
	c := in.combo
	var b strings.Builder
	var peers []string
	for _, a := range in.peers {
		peers = append(peers, fmt.Sprintf("%q", a))
	}
	fmt.Fprintf(&b, "kolco:\n  admin_listen: %s\n  admin_peers: [%s]\n", in.admin, strings.Join(peers, ", "))
	fmt.Fprintf(&b, "%s:\n  listen: %s\n  distribution: %s\n", poolName, in.listen, c.Algorithm)
	if c.twemproxy() {
		b.WriteString("  hash: fnv1a_64\n")
	}
	fmt.Fprintf(&b, "  timeout: %d\n  server_failure_limit: 2\n  server_retry_timeout: %d\n  health_check: {interval: %d, timeout: %d}\n",
		poolTimeout.Milliseconds(), retryTimeout.Milliseconds(), probeEvery.Milliseconds(), poolTimeout.Milliseconds())
	switch c.Ejection {
	case "rehash":
		b.WriteString("  auto_eject_hosts: true\n  ejection: rehash\n")
	case "fail-fast":
		b.WriteString("  auto_eject_hosts: false\n  ejection: fail-fast\n")
	default:
		b.WriteString("  auto_eject_hosts: false\n  ejection: none\n")
	}
	if c.Copies > 1 {
		fmt.Fprintf(&b, "  replicas: %d\n", c.Copies)
	}
	switch {
	case c.Redis:
		b.WriteString("  redis: true\n")
	case c.Copies > 1:
		// Warm changes are refused with replicas: every server a change
		// leaves keys on is swept instead.
		b.WriteString("  warm: {enabled: false}\n  sweep: {exclusive: [\"*\"]}\n")
	default:
		// Every server is the pool's alone: a change's copies left
		// behind are swept, so that a later change cannot read them.
		b.WriteString("  warm: {enabled: true}\n  sweep: {exclusive: [\"*\"]}\n")
	}
	if c.Store {
		b.WriteString("  store: {enabled: true, rate: 2000}\n")
	}
	if c.ReplicaReads {
		fmt.Fprintf(&b, "  replica_reads: {enabled: true, max_lag: %d}\n", maxLag.Milliseconds())
	}
	b.WriteString("  servers:\n")
	for _, s := range in.servers {
		fmt.Fprintf(&b, "   - %s:1 %s\n", s[0], s[1])
	}
	if src := sourceConfig(c.Source, in.source); src != "" {
		b.WriteString("  membership:\n    " + src + "\n")
	}
	return b.String()
}

// sourceConfig is the pool's membership key.
func sourceConfig(source string, in sourceInput) string {
	quoted := func(xs []string) string {
		var q []string
		for _, x := range xs {
			q = append(q, fmt.Sprintf("%q", x))
		}
		return strings.Join(q, ", ")
	}
	switch source {
	case "file":
		return fmt.Sprintf("file: {path: %s, pool: %s, interval: 200, settle: 300}", in.membersFile, poolName)
	case "etcd":
		return fmt.Sprintf("etcd: {endpoints: [%q], prefix: %s, check_interval: 200}", in.etcd, etcdPrefix)
	case "gossip":
		return fmt.Sprintf("gossip: {bind: %q, seeds: [%s], key_file: %s, probe_interval: %d, gossip_interval: 50}",
			in.gossipBind, quoted(in.gossipSeeds), in.keyFile, gossipProbe.Milliseconds())
	case "sentinel":
		return fmt.Sprintf("sentinel: {sentinels: [%s], interval: 500, timeout: 500}", quoted(in.sentinels))
	}
	return ""
}

// addrOf is where the pool reaches the server or shard name.
func (r *run) addrOf(name string) string {
	for _, s := range r.servers {
		if s.Name == name {
			return s.Addr()
		}
	}
	for _, sh := range r.sentinels.shards {
		if sh.Name == name {
			return sh.nodes[0].Direct() // the Sentinels say where its primary is now
		}
	}
	return "127.0.0.1:1"
}

// writeMembersFile writes the members file of a file source, whole, by a
// rename: the source applies a file once it has settled anyway.
func (r *run) writeMembersFile() error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n  servers:\n", poolName)
	for _, name := range r.members {
		fmt.Fprintf(&b, "   - %s:1 %s\n", r.addrOf(name), name)
	}
	return writeAtomically(r.membersFile, b.String())
}
