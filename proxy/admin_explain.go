package proxy

import (
	"fmt"
	"io"
	"strings"

	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/bounded"
	"github.com/kolco-dev/kolco/ring"
)

// Explain writes a plain-language account of the configuration: for each
// pool, where it listens, how keys are placed, each server with its ring
// name and nominal share of keys, and what happens when a server fails.
// It expects a valid configuration, and builds each pool's placement
// as the proxy would, so that a config it reports on is one the proxy
// starts with.
func (c *Config) Explain(w io.Writer) error {
	c = c.WithDefaults()
	var b strings.Builder
	for _, name := range c.PoolNames() {
		p := c.Pools[name]
		if _, err := newPicker(p, p.nodes()); err != nil {
			return placementError(name, err)
		}
		explainPool(&b, p, name)
		explainState(&b, p, c.statePath())
		explainStoreState(&b, p, c.statePath())
	}
	g := c.Global
	if g.MetricsListen != "" {
		auth := "no token"
		if g.AdminTokenFile != "" {
			auth = "the admin endpoint's bearer token from " + g.AdminTokenFile
		}
		fmt.Fprintf(&b, "metrics: Prometheus /metrics on http://%s (%s)\n", adminAddr(g.MetricsListen), auth)
	}
	if g.StatsListen != "" {
		fmt.Fprintf(&b, "stats: nutcracker's JSON stats on %s, refreshed every %d ms\n", g.StatsListen, g.StatsInterval.Milliseconds())
	}
	if g.AdminListen != "" {
		auth := "no token"
		if g.AdminTokenFile != "" {
			auth = "a bearer token from " + g.AdminTokenFile
		}
		fmt.Fprintf(&b, "admin: where keys live, pools and /metrics on http://%s (%s)\n", adminAddr(g.AdminListen), auth)
		explainPeers(&b, g.AdminPeers)
	}
	fmt.Fprintf(&b, "buffers: requests and replies in flight hold at most %d bytes in all\n", g.BufferLimit)
	if g.Threads > 0 {
		fmt.Fprintf(&b, "threads: %d (GOMAXPROCS, unless set in the environment)\n", g.Threads)
	} else {
		fmt.Fprintf(&b, "threads: one while the proxy's work fits in one core, every core when it does not (unless GOMAXPROCS is set)\n")
	}
	fmt.Fprintf(&b, "shutdown: requests in flight get up to %d ms to finish\n", g.ShutdownTimeout.Milliseconds())
	_, err := io.WriteString(w, b.String())
	return err
}

// explainPool writes what the pool name does, as its settings p say.
func explainPool(b *strings.Builder, p *PoolConfig, name string) {
	fmt.Fprintf(b, "pool %q: %s on %s\n", name, p.protocol(), p.Listen)
	explainPlacement(b, p)
	explainMembership(b, p)
	explainTLS(b, p)
	explainServers(b, p)
	fmt.Fprintf(b, "  connections: %d per server, pipelined; reply timeout %d ms; preconnect %v\n",
		p.ServerConnections, p.Timeout.Milliseconds(), p.Preconnect)
	switch p.Ejection {
	case EjectRehash:
		fmt.Fprintf(b, "  failures: after %d consecutive failures a server is ejected and its keys move to the live servers (rehash); it is retried after %d ms\n",
			p.ServerFailureLimit, p.ServerRetryTimeout.Milliseconds())
	case EjectNone:
		fmt.Fprintf(b, "  failures: a failed server's keys get %s while it fails; every request tries it and it is never marked down, as nutcracker without auto_eject_hosts\n", p.errorName())
	default:
		fmt.Fprintf(b, "  failures: a failed server's keys get %s until it is back (fail-fast); no key moves; after %d consecutive failures it is marked down and retried after %d ms\n",
			p.errorName(), p.ServerFailureLimit, p.ServerRetryTimeout.Milliseconds())
	}
	explainReturns(b, p)
	explainHealth(b, p)
	explainLimits(b, p)
}

// explainPlacement writes how the pool places keys.
func explainPlacement(b *strings.Builder, p *PoolConfig) {
	tag := "the whole key"
	if p.HashTag != "" {
		tag = fmt.Sprintf("the text between %q and %q when present, else the whole key", p.HashTag[0], p.HashTag[1])
	}
	switch {
	case p.Distribution == "random":
		fmt.Fprintf(b, "  placement: random: each request to a server picked at random among the live ones, whatever the key and the weights, as twemproxy 0.5 does (hash and hash_tag are not used)\n")
	case p.Hash != "":
		fmt.Fprintf(b, "  placement: %s over %s of %s, as twemproxy 0.5 places it\n", p.Distribution, p.Hash, tag)
	default:
		keyHash := p.KeyHash
		if keyHash == "" {
			keyHash = "crc16" // slots without key_hash, as Redis Cluster
		}
		fmt.Fprintf(b, "  placement: kolco %s over %s of %s%s; not twemproxy's placement\n",
			p.Distribution, keyHash, tag, vnodesText(p))
	}
}

// explainServers writes the pool's servers with their nominal shares, and
// its replicas.
func explainServers(b *strings.Builder, p *PoolConfig) {
	total := 0
	for _, s := range p.Servers {
		total += max(s.Weight, 1)
	}
	fmt.Fprintf(b, "  servers (%d):\n", len(p.Servers))
	for _, s := range p.Servers {
		zone := ""
		if z := p.zoneOf(s); z != "" {
			zone = " zone " + z
		}
		fmt.Fprintf(b, "    %-24s ring name %-24q weight %-3d nominal share %5.1f%%%s\n",
			s.Addr(), s.RingName(), max(s.Weight, 1), 100*float64(max(s.Weight, 1))/float64(total), zone)
	}
	if p.Replicas > 1 {
		distinct := ""
		if len(p.Zones) > 0 {
			distinct = ", in distinct zones while zones last"
		}
		read := "the first live one"
		if p.Zone != "" {
			read = fmt.Sprintf("the first live one in zone %s, else the first live one", p.Zone)
		}
		fmt.Fprintf(b, "  replicas: each key on %d servers%s; writes go to all (the reply is the first that is not an error), reads to %s; cas refused; a down server keeps its place\n",
			p.Replicas, distinct, read)
	}
}

// explainHealth writes how a failing or down server is probed and shown
// up again.
func explainHealth(b *strings.Builder, p *PoolConfig) {
	switch {
	case p.Ejection == EjectNone && p.HealthCheck.Interval > 0:
		fmt.Fprintf(b, "  health: no server is ever marked down; a failing one is probed with %q every %d ms (timeout %d ms), and shown up once it answers\n",
			p.probeName(), p.HealthCheck.Interval.Milliseconds(), p.HealthCheck.Timeout.Milliseconds())
	case p.Ejection == EjectNone:
		fmt.Fprintf(b, "  health: no probes; no server is ever marked down; a failing one is shown up %d ms after its last failure\n", p.ServerRetryTimeout.Milliseconds())
	case p.HealthCheck.Interval > 0:
		fmt.Fprintf(b, "  health: a down server is probed with %q every %d ms (timeout %d ms) and restored when it answers; a failing one not marked down yet is probed too, and shown up once it answers\n",
			p.probeName(), p.HealthCheck.Interval.Milliseconds(), p.HealthCheck.Timeout.Milliseconds())
	default:
		fmt.Fprintf(b, "  health: no probes; a down server returns %d ms after it was marked down\n", p.ServerRetryTimeout.Milliseconds())
	}
}

// explainReturns writes what a down server's return does: the keys
// written elsewhere while it was out are settled before it serves again.
func explainReturns(b *strings.Builder, p *PoolConfig) {
	if p.Ejection != EjectRehash && p.Replicas <= 1 {
		return
	}
	how := "copied to it from where they were written (meta commands, each conditional on what it held), a key written nowhere deleted"
	overflow := "emptied (flush_all) if marked exclusive (sweep.exclusive), else kept down until an operator empties it"
	if p.Redis {
		how = "copied to it from where they were written (DUMP and RESTORE, in a transaction that WATCH voids if another client wrote one), a key written nowhere deleted"
		overflow = "kept down until an operator empties it: a Redis server is never emptied by the proxy"
	}
	fmt.Fprintf(b, "  returns: the keys written elsewhere while a server is down (up to %d) are %s, before it serves again; the stand-ins' copies are deleted once it owns its keys; nothing else of it is touched. Past %d keys, what it missed is unknown: it is %s\n",
		p.OutageJournal, how, p.OutageJournal, overflow)
}

// explainState writes where the history of a history-dependent placement
// is kept, which a restart needs to place keys as before.
func explainState(b *strings.Builder, p *PoolConfig, statePath string) {
	if isTwemproxy(p) || !settingsOf(p).historyDependent() {
		return
	}
	const what = "the placement's history (which servers hold which buckets or slots, and the order of removals)"
	switch {
	case p.Membership != nil && p.Membership.Etcd != nil:
		fmt.Fprintf(b, "  state: %s is kept in etcd under %s, beside the servers, so that every proxy following it places alike\n", what, p.Membership.Etcd.Prefix)
	case p.Membership != nil: // Sentinel's: the file and DNS sources refuse such a distribution, as gossip does
		fmt.Fprintf(b, "  state: %s is not kept, nor needed: the servers are the Sentinel masters' names, which a failover does not change\n", what)
	case statePath == "":
		fmt.Fprintf(b, "  state: %s is not kept (kolco.state_file is not set and the configuration was not read from a file): a restart places keys afresh\n", what)
	default:
		fmt.Fprintf(b, "  state: %s is kept in %s, rewritten on each change; a restart without it places keys afresh, and warns when the servers hold data: back it up with the configuration\n", what, statePath)
	}
}

// explainStoreState writes where a store keeps a move under way, which a
// restart needs to go on with it.
func explainStoreState(b *strings.Builder, p *PoolConfig, statePath string) {
	if !p.Store.Enabled {
		return
	}
	const what = "the servers it serves and a move under way (the placements it follows, and an operator's pause)"
	if statePath == "" {
		fmt.Fprintf(b, "  store state: %s is not kept (kolco.state_file is not set and the configuration was not read from a file): a proxy restarted mid-move does not go on with it, and keys that had yet to move are read where they are not\n", what)
		return
	}
	fmt.Fprintf(b, "  store state: %s is kept in %s, so that a proxy restarted, killed or handed over mid-move goes on with it, and one started on a configuration edited meanwhile moves keys from the servers that hold them\n", what, statePath)
}

// explainLimits writes the pool's limits, and what it does with
// the commands of its protocol that need a word.
func explainLimits(b *strings.Builder, p *PoolConfig) {
	idle := "never"
	if p.ClientIdleTimeout > 0 {
		idle = fmt.Sprintf("after %d ms", p.ClientIdleTimeout.Milliseconds())
	}
	keys := "any number of keys"
	if p.MaxKeys > 0 {
		keys = fmt.Sprintf("%d keys", p.MaxKeys)
	}
	per := "get"
	if p.Redis {
		per = "request"
	}
	fmt.Fprintf(b, "  limits: %d client connections, idle clients closed %s, values up to %d bytes, %s per %s, %d requests or %d bytes in flight per client\n",
		p.MaxClientConnections, idle, p.MaxValueSize, keys, per, p.MaxPending, p.ClientBufferLimit)
	if p.Redis {
		p.explainRedis(b)
		p.HotKeys.explain(b, p)
		return
	}
	fmt.Fprintf(b, "  flush_all: %s\n", map[string]string{"refuse": "refused", "broadcast": "sent to every server"}[p.FlushAll])
	p.explainChanges(b)
	p.Traffic.explain(b)
	p.HotKeys.explain(b, p)
	for _, why := range p.ignoredSettings() {
		fmt.Fprintf(b, "  ignored, as nutcracker ignores it: %s\n", why)
	}
}

// vnodesText says the points per unit of weight of a distribution that
// has them, the default given as its number: " (160 vnodes per unit of
// weight, the default)"; "" for one without.
func vnodesText(p *PoolConfig) string {
	info, ok := algo.Lookup(p.Distribution)
	if !ok || info.Options&algo.VNodesOption == 0 {
		return ""
	}
	if p.VNodes != 0 {
		return fmt.Sprintf(" (%d vnodes per unit of weight)", p.VNodes)
	}
	n := ring.DefaultVNodes
	if info.Name == "bounded" {
		n = bounded.DefaultVNodes
	}
	return fmt.Sprintf(" (%d vnodes per unit of weight, the default)", n)
}
