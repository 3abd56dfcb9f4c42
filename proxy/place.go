package proxy

import (
	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/proxy/memcache"
)

// routeScratch is a request's space for routing, reused so that routing
// allocates nothing.
type routeScratch struct {
	owners [maxReplicas]*backend
	idx    []int
	nodes  []kolco.Node
}

// route returns the servers a request for key goes to, in preference
// order: for a write in a pool with replicas, the server of every copy;
// otherwise the one server that answers it - the owner, or with replicas
// the copy a read goes to. It returns none when no server is live. The
// result lives in sc until the next call.
//
// Every keyed request is routed here: one place to consult health, or a
// previous placement, at lookup.
func (pl *placement) route(key []byte, write bool, sc *routeScratch) []*backend {
	if len(pl.servers) == 0 {
		return nil
	}
	if pl.replicas <= 1 {
		b := pl.servers[pl.pick.Index(key)]
		if pl.skipDown && b.health.isDown() {
			if b = pl.standIn(key, sc); b == nil {
				return nil
			}
		}
		sc.owners[0] = b
		return sc.owners[:1]
	}
	sc.idx, sc.nodes = pl.copies(sc.idx[:0], sc.nodes, key)
	if write {
		owners := sc.owners[:0]
		for _, i := range sc.idx {
			owners = append(owners, pl.servers[i])
		}
		return owners
	}
	sc.owners[0] = pl.readCopy(sc.idx)
	return sc.owners[:1]
}

// standIn returns the server that takes key while its owner is marked
// down: the first server not down in the key's preference list (LocateN,
// whose lists grow by extension: asked for twice as many each round), or
// nil when every server is down. The configured placement does not
// change, so only the down server's keys move, each to a server that is
// a function of the key and the servers down, and each goes back to its
// owner when it is restored, whatever the order of failures and restores.
func (pl *placement) standIn(key []byte, sc *routeScratch) *backend {
	return pl.standInBy(key, sc, nil)
}

// standInBy is standIn with the servers down marked in down, by index in
// pl.servers, instead of their health now when down is not nil.
func (pl *placement) standInBy(key []byte, sc *routeScratch, down []bool) *backend {
	k := pl.kolco
	ks := k.key(key)
	total := len(pl.servers)
	seen := 1 // the owner, known to be down
	for n := min(2, total); ; n = min(2*n, total) {
		var err error
		if sc.nodes, err = k.p.LocateN(sc.nodes[:0], ks, n); err != nil {
			return nil // not reached: the pool has servers
		}
		for _, node := range sc.nodes[min(seen, len(sc.nodes)):] {
			if i := k.lay.index(node.ID); i >= 0 && (down == nil && !pl.servers[i].health.isDown() || down != nil && !down[i]) {
				return pl.servers[i]
			}
		}
		if n >= total {
			return nil
		}
		seen = len(sc.nodes)
	}
}

// readCopy returns the copy, of those at idx, a read goes to: the first
// one not down in the proxy's zone, else the first one not down, else the
// first.
func (pl *placement) readCopy(idx []int) *backend {
	var up *backend
	for _, i := range idx {
		b := pl.servers[i]
		if b.health.isDown() {
			continue
		}
		if pl.zone == "" || b.zone == pl.zone {
			return b
		}
		if up == nil {
			up = b
		}
	}
	if up != nil {
		return up
	}
	return pl.servers[idx[0]]
}

// forward sends a request the proxy does not answer itself to the servers
// it concerns.
func (p *pool) forward(r *request) {
	if pl := p.place.Load(); pl.mig != nil && pl.mig.open() && p.forwardWarm(r, pl) {
		return
	}
	switch {
	case r.req.Cmd == memcache.CmdFlushAll:
		p.broadcast(r)
	case r.req.Cmd.IsRetrieval() && len(r.req.Keys) > 1:
		p.split(r)
	default:
		p.single(r)
	}
}

// single sends a one-key request to the server that owns the key; with
// replicas, a write to every copy and a read to one.
func (p *pool) single(r *request) {
	write := p.cfg.Replicas > 1 && writesKey(&r.req)
	if write && comparesCas(&r.req) {
		r.answerError(ErrCasReplicas)
		r.ready()
		return
	}
	owners := p.place.Load().route(r.req.Key(0), write, &r.route)
	if len(owners) == 0 {
		r.answerError(ErrNoServers)
		r.ready()
		return
	}
	deadline := r.start.Add(p.cfg.Timeout)
	for range owners {
		o := r.newOp(r.req.Cmd, deadline)
		o.encode(&r.req)
	}
	r.replicated = write
	r.left.Store(int32(len(r.ops)))
	for i, o := range r.ops {
		owners[i].send(o)
	}
}

// split sends a retrieval of several keys to the servers that own them,
// one op per server, each carrying that server's keys in the client's
// order. Each server answers its keys in the order it got them, which is
// what lets the reply be merged in the client's order.
func (p *pool) split(r *request) {
	place := p.place.Load()
	var owners [16]*backend
	own := owners[:0]
	for i := range r.req.Keys {
		var b *backend // nil when no server is live: its op fails
		if o := place.route(r.req.Key(i), false, &r.route); len(o) > 0 {
			b = o[0]
		}
		oi := 0
		for oi < len(own) && own[oi] != b {
			oi++
		}
		if oi == len(own) {
			own = append(own, b)
		}
		r.order = append(r.order, oi)
	}
	deadline := r.start.Add(p.cfg.Timeout)
	for range own {
		r.newOp(r.req.Cmd, deadline)
	}
	r.encodeSplit()
	r.left.Store(int32(len(r.ops)))
	for i, o := range r.ops {
		if own[i] == nil {
			o.finish(ErrNoServers)
			continue
		}
		own[i].send(o)
	}
}

// encodeSplit encodes each op of a split retrieval with its keys, in the
// client's order: a stable counting sort groups the keys by op.
func (r *request) encodeSplit() {
	starts := r.starts[:0]
	for range len(r.ops) + 1 {
		starts = append(starts, 0)
	}
	for _, oi := range r.order {
		starts[oi+1]++
	}
	for i := 1; i < len(starts); i++ {
		starts[i] += starts[i-1]
	}
	if cap(r.keys) < len(r.order) {
		r.keys = make([][]byte, len(r.order))
	}
	keys := r.keys[:len(r.order)]
	for i, oi := range r.order {
		keys[starts[oi]] = r.req.Keys[i]
		starts[oi]++ // now where op oi's keys end
	}
	lo := 0
	for oi, o := range r.ops {
		o.buf = memcache.AppendRetrieval(o.buf[:0], r.req.Cmd, r.req.Exptime, keys[lo:starts[oi]])
		o.keys = starts[oi] - lo
		lo = starts[oi]
	}
	r.starts = starts
}

// broadcast sends flush_all to every server of the pool.
func (p *pool) broadcast(r *request) {
	deadline := r.start.Add(p.cfg.Timeout)
	for range p.backends {
		o := r.newOp(r.req.Cmd, deadline)
		o.buf = memcache.AppendRequest(o.buf[:0], &r.req)
	}
	r.left.Store(int32(len(r.ops)))
	for i, o := range r.ops {
		p.backends[i].send(o)
	}
}
