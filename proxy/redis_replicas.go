package proxy

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/resp"
)

// Replica reads (see ReplicaReads). A Sentinel pool's tracker asks the
// Sentinels which replicas each shard has (SENTINEL REPLICAS) and
// measures, every lagTick, how far behind its primary each one is: it
// keeps the primary's replication offset over time (INFO replication's
// master_repl_offset), and a replica whose own offset (slave_repl_offset)
// has reached the primary's offset as of time T held everything written
// before T; its lag is the time since the latest such T. A replica that
// does not answer within the tick, or whose link to its primary is down,
// has no known lag and is not read. Each pool has its own tracker, from
// its start to its close, so that it measures against the primaries the
// pool sends to; a new pool's replicas are read once measured.

// lagTick is how often the tracker measures; replicaListEvery how often
// it asks the Sentinels for the replicas.
const (
	lagTick          = 100 * time.Millisecond
	replicaListEvery = time.Second
)

// replicaTracker tracks the replicas of a pool's shards.
type replicaTracker struct {
	p      *pool
	maxLag time.Duration
	shards map[string]*shardReplicas // by the primary's server name
	conns  map[string]*resp.Conn     // by address, kept between ticks
	// retired are replicas no longer listed whose connections are not
	// closed yet: a read in flight on one finishes.
	retired []retiredReplica
}

// shardReplicas are a shard's primary's offsets and its replicas.
type shardReplicas struct {
	primary  *backend
	samples  []offsetAt // the primary's offsets, oldest first
	replicas atomic.Pointer[[]*replica]
	next     atomic.Uint32 // round robin over the readable replicas
}

type offsetAt struct {
	offset int64
	at     time.Time
}

// replica is one replica of a shard, with a server connection of its own.
type replica struct {
	b *backend
	// lag is how far behind the primary the replica is, in nanoseconds;
	// -1 when not known.
	lag      atomic.Int64
	readable atomic.Bool
}

// startReplicaReads starts the tracker of a Redis pool with replica reads;
// it runs until the pool's context ends, and closes the replicas'
// connections then.
func startReplicaReads(ctx context.Context, p *pool) {
	t := &replicaTracker{p: p, maxLag: time.Duration(p.cfg.ReplicaReads.MaxLag) * time.Millisecond,
		shards: map[string]*shardReplicas{}, conns: map[string]*resp.Conn{}}
	for _, b := range p.backends {
		t.shards[b.name()] = &shardReplicas{primary: b}
	}
	redisStateOf(p).replicas.Store(t)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t.run(ctx)
	}()
}

func (t *replicaTracker) run(ctx context.Context) {
	defer t.close()
	var listed time.Time
	tick := time.NewTicker(lagTick)
	defer tick.Stop()
	for {
		if time.Since(listed) >= replicaListEvery {
			t.list(ctx)
			listed = time.Now()
		}
		t.measure(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// close closes the tracker's connections and the replicas' server
// connections; the pool has no request in flight by then.
func (t *replicaTracker) close() {
	for _, c := range t.conns {
		_ = c.Close()
	}
	for _, sh := range t.shards {
		if reps := sh.replicas.Load(); reps != nil {
			for _, r := range *reps {
				r.b.close()
			}
		}
	}
	t.closeRetired(true)
}

// list asks the Sentinels for each shard's replicas and updates the
// shards' lists, keeping the replicas still listed.
func (t *replicaTracker) list(ctx context.Context) {
	sn := t.p.cfg.Membership.Sentinel
	for name, sh := range t.shards {
		addrs, ok := t.askReplicas(ctx, sn, name)
		if !ok {
			continue
		}
		var old []*replica
		if reps := sh.replicas.Load(); reps != nil {
			old = *reps
		}
		next := make([]*replica, 0, len(addrs))
		for _, a := range addrs {
			if i := slices.IndexFunc(old, func(r *replica) bool { return r.b.addr == a }); i >= 0 {
				next = append(next, old[i])
				old = slices.Delete(old, i, i+1)
				continue
			}
			if r := t.revive(a); r != nil {
				next = append(next, r)
				continue
			}
			r := &replica{b: newBackend(t.p, kolco.Node{ID: name, Addr: a, Weight: 1})}
			r.b.replicaOf = sh.primary
			r.lag.Store(-1)
			next = append(next, r)
		}
		sh.replicas.Store(&next)
		for _, r := range old {
			// No longer listed: new reads go elsewhere; those in flight
			// are let finish (see retire).
			r.readable.Store(false)
			t.retired = append(t.retired, retiredReplica{r, time.Now()})
		}
	}
	t.closeRetired(false)
}

// retiredReplica is a replica no longer listed, and since when.
type retiredReplica struct {
	r  *replica
	at time.Time
}

// closeRetired closes the connections of the replicas retired longer ago
// than the pool's timeout, by when the reads in flight on them are done,
// or of all of them.
func (t *replicaTracker) closeRetired(all bool) {
	keep := t.retired[:0]
	for _, rr := range t.retired {
		if all || time.Since(rr.at) > t.p.cfg.Timeout+lagTick {
			rr.r.b.close()
			continue
		}
		keep = append(keep, rr)
	}
	clear(t.retired[len(keep):])
	t.retired = keep
}

// revive returns the replica at addr retired and not closed yet, listed
// again, or nil: its connections and lag are good still.
func (t *replicaTracker) revive(addr string) *replica {
	for i, rr := range t.retired {
		if rr.r.b.addr == addr {
			t.retired = slices.Delete(t.retired, i, i+1)
			return rr.r
		}
	}
	return nil
}

// askReplicas returns the addresses of the replicas of master name that
// the first Sentinel to answer lists as up and linked to their primary.
func (t *replicaTracker) askReplicas(ctx context.Context, sn *SentinelMembership, name string) ([]string, bool) {
	for _, addr := range sn.Sentinels {
		var auth []string
		switch {
		case sn.Password != "" && sn.Username != "":
			auth = []string{sn.Username, sn.Password}
		case sn.Password != "":
			auth = []string{sn.Password}
		}
		c, err := t.dial(ctx, addr, auth)
		if err != nil {
			continue
		}
		v, err := c.Do("SENTINEL", "REPLICAS", name)
		if err != nil {
			t.drop(addr)
			continue
		}
		return replicaAddrs(v), true
	}
	return nil, false
}

// replicaAddrs reads SENTINEL REPLICAS's reply: the replicas not flagged
// down or disconnected, whose link to the primary is up.
func replicaAddrs(v resp.Value) []string {
	var out []string
	for _, e := range v.Elems {
		fields, ok := e.Strings()
		if !ok || len(fields)%2 != 0 {
			continue
		}
		f := map[string]string{}
		for i := 0; i < len(fields); i += 2 {
			f[fields[i]] = fields[i+1]
		}
		port, err := strconv.Atoi(f["port"])
		if f["ip"] == "" || err != nil || port < 1 || port > 65535 || f["master-link-status"] != "ok" ||
			strings.Contains(f["flags"], "down") || strings.Contains(f["flags"], "disconnected") {
			continue
		}
		out = append(out, fmt.Sprintf("%s:%d", f["ip"], port))
	}
	slices.Sort(out)
	return out
}

// measure reads each primary's offset and each replica's, and sets each
// replica's lag and whether it may be read.
func (t *replicaTracker) measure(ctx context.Context) {
	now := time.Now()
	for _, sh := range t.shards {
		auth := t.p.cfg.serverAuth(sh.primary.node)
		if info, err := t.info(ctx, sh.primary.addr, auth); err == nil {
			if off, ok := infoInt(info, "master_repl_offset"); ok {
				sh.samples = append(sh.samples, offsetAt{off, now})
			}
		}
		// Keep what a replica within the bound, and a little more, needs.
		for len(sh.samples) > 1 && now.Sub(sh.samples[1].at) > t.maxLag+time.Second {
			sh.samples = sh.samples[1:]
		}
		reps := sh.replicas.Load()
		if reps == nil {
			continue
		}
		for _, r := range *reps {
			lag := time.Duration(-1)
			if info, err := t.info(ctx, r.b.addr, auth); err == nil && infoField(info, "master_link_status") == "up" {
				if off, ok := infoInt(info, "slave_repl_offset"); ok {
					lag = lagOf(sh.samples, off, now)
				}
			}
			r.lag.Store(int64(lag))
			r.readable.Store(lag >= 0 && lag <= t.maxLag)
		}
	}
}

// lagOf returns how far behind a replica at offset is: the time since the
// latest sample of its primary's offset it has reached; -1 when it has
// reached none the tracker kept.
func lagOf(samples []offsetAt, offset int64, now time.Time) time.Duration {
	for i := len(samples) - 1; i >= 0; i-- {
		if samples[i].offset <= offset {
			return now.Sub(samples[i].at)
		}
	}
	return -1
}

// info runs INFO replication on addr, on the tracker's connection to it,
// within a tick.
func (t *replicaTracker) info(ctx context.Context, addr string, auth []string) (string, error) {
	c, err := t.dial(ctx, addr, auth)
	if err != nil {
		return "", err
	}
	_ = c.SetDeadline(time.Now().Add(lagTick))
	v, err := c.Do("INFO", "replication")
	if err != nil {
		t.drop(addr)
		return "", err
	}
	return v.Str, nil
}

// dial returns the tracker's connection to addr, authenticated with
// auth's AUTH arguments, if any.
func (t *replicaTracker) dial(ctx context.Context, addr string, auth []string) (*resp.Conn, error) {
	if c := t.conns[addr]; c != nil {
		return c, nil
	}
	dctx, cancel := context.WithTimeout(ctx, lagTick)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(dctx, "tcp", addr)
	switch {
	case err != nil:
	case !t.sentinel(addr):
		conn, err = t.p.serverConn(dctx, conn, "", addr, lagTick)
	case t.p.sentinelTLS != nil:
		conn, err = sentinelConn(dctx, conn, t.p.sentinelTLS, addr)
	}
	if err != nil {
		return nil, err
	}
	c := resp.NewConn(conn)
	_ = c.SetDeadline(time.Now().Add(lagTick))
	if auth != nil {
		if _, err := c.Do(append([]string{"AUTH"}, auth...)...); err != nil {
			_ = c.Close()
			return nil, err
		}
	}
	t.conns[addr] = c
	return c, nil
}

// sentinel reports whether addr is one of the pool's Sentinels, which
// are reached as their tls setting says, not as the servers are.
func (t *replicaTracker) sentinel(addr string) bool {
	return slices.Contains(t.p.cfg.Membership.Sentinel.Sentinels, addr)
}

// drop closes and forgets the connection to addr, after an error.
func (t *replicaTracker) drop(addr string) {
	if c := t.conns[addr]; c != nil {
		_ = c.Close()
		delete(t.conns, addr)
	}
}

// infoField returns the value of key in an INFO reply's "key:value"
// lines, or "".
func infoField(info, key string) string {
	for line := range strings.SplitSeq(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimRight(line, "\r"), ":"); ok && k == key {
			return v
		}
	}
	return ""
}

func infoInt(info, key string) (int64, bool) {
	n, err := strconv.ParseInt(infoField(info, key), 10, 64)
	return n, err == nil && n >= 0
}

// wroteShards are the shards a client of a pool with replica reads
// wrote to, by server name: it reads them from their primaries from then
// on, so that it reads its own writes.
type wroteShards map[string]bool

// server returns the server a request part for shard b goes to: a
// replica for a read (replicaFor); b for a write, noted.
func (w *wroteShards) server(p *pool, r *redisRequest, b *backend) *backend {
	if r.req.Cmd.ReadOnly() {
		return w.replicaFor(p, b)
	}
	w.note(b)
	return b
}

// replicaFor returns the server a read-only request for a key of shard b
// goes to: a readable replica of b, unless the client wrote to b, else b.
func (w *wroteShards) replicaFor(p *pool, b *backend) *backend {
	t := redisStateOf(p).replicas.Load()
	if t == nil || (*w)[b.name()] {
		return b
	}
	sh := t.shards[b.name()]
	if sh == nil {
		return b
	}
	reps := sh.replicas.Load()
	if reps == nil || len(*reps) == 0 {
		return b
	}
	n := len(*reps)
	start := int(sh.next.Add(1))
	for i := range n {
		if r := (*reps)[(start+i)%n]; r.readable.Load() {
			return r.b
		}
	}
	return b
}

// note records that the client sent a request that may write to b's
// shard: it reads that shard from its primary from now on.
func (w *wroteShards) note(b *backend) {
	if *w == nil {
		*w = wroteShards{}
	}
	(*w)[b.name()] = true
}

// replicas returns the replicas of server that p's tracker knows.
func (redisFront) replicas(p *pool, server string) []ReplicaStatus {
	t := redisStateOf(p).replicas.Load()
	if t == nil || t.shards[server] == nil {
		return nil
	}
	reps := t.shards[server].replicas.Load()
	if reps == nil {
		return nil
	}
	out := make([]ReplicaStatus, len(*reps))
	for i, r := range *reps {
		lag := float64(-1)
		if ns := r.lag.Load(); ns >= 0 {
			lag = float64(ns) / 1e6
		}
		out[i] = ReplicaStatus{Addr: r.b.addr, LagMs: lag, Readable: r.readable.Load()}
	}
	return out
}

// sentinelConn returns conn over TLS to the Sentinel at addr with cfg,
// verifying the host of addr when cfg names none, as the pool's source
// does; on error conn is closed.
func sentinelConn(ctx context.Context, conn net.Conn, cfg *tls.Config, addr string) (net.Conn, error) {
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(addr)
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	return tc, nil
}
