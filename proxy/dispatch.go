package proxy

import (
	"bytes"
	"fmt"
	"strconv"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// Version is what the proxy answers to "version".
const Version = "1.6.18 kolco-proxy"

// dispatch starts serving one parsed request: it answers what the proxy
// answers itself and sends the rest to the servers that own the keys.
func (c *client) dispatch(pl *pool, p *pending) {
	p.pool, p.start = pl, time.Now()
	req := &p.req
	switch req.Cmd {
	case memcache.CmdVersion:
		p.local = append(p.local, "VERSION "+Version+"\r\n"...)
	case memcache.CmdQuit:
		p.close = true
	case memcache.CmdStats:
		switch {
		case len(req.Args) == 0 || len(req.Args) == 1 && string(req.Args[0]) == "proxy":
			p.local = pl.appendStats(p.local)
		default:
			p.answerError(fmt.Errorf("%w %s", ErrStatsArgs, bytes.Join(req.Args, []byte(" "))))
		}
	case memcache.CmdVerbosity:
		if !req.Noreply {
			p.local = append(p.local, "OK\r\n"...)
		}
	case memcache.CmdMetaNoop:
		// Written only after every earlier reply, since replies keep order.
		p.local = append(p.local, "MN\r\n"...)
	case memcache.CmdFlushAll:
		if pl.cfg.FlushAll == "broadcast" {
			c.broadcast(pl, p)
			return
		}
		p.answerError(ErrFlushAllRefused)
	default:
		if req.Cmd.IsRetrieval() && len(req.Keys) > 1 {
			c.multiGet(pl, p)
		} else {
			c.single(pl, p)
		}
		return
	}
	p.left.Store(1)
	p.opDone(nil)
}

// single sends a one-key request to the server that owns the key; with
// replicas, a write to every replica and a read to one.
func (c *client) single(pl *pool, p *pending) {
	var b *backend
	if pl.cfg.Replicas > 1 {
		if writesKey(&p.req) {
			c.replicate(pl, p)
			return
		}
		b = pl.readReplica(p, p.req.Key(0))
	} else {
		b = pl.route(p.req.Key(0))
	}
	o := p.newOp(p.req.Cmd, time.Now().Add(ms(pl.cfg.Timeout)))
	o.buf = memcache.AppendRequest(o.buf[:0], &p.req)
	p.left.Store(1)
	send(pl, b, o)
}

// writesKey reports whether a keyed request changes the key's data, and so
// goes to every replica. mg, me and the retrievals (gat and gats touch
// only the copy they read) go to one.
func writesKey(req *memcache.Request) bool {
	switch req.Cmd {
	case memcache.CmdMetaSet, memcache.CmdMetaDelete, memcache.CmdMetaArithmetic:
		return true
	}
	return req.Cmd.IsStorage() || req.Cmd == memcache.CmdDelete || req.Cmd == memcache.CmdIncr ||
		req.Cmd == memcache.CmdDecr || req.Cmd == memcache.CmdTouch
}

// comparesCas reports whether a write is conditional on a cas value: cas,
// or a meta write with the C flag.
func comparesCas(req *memcache.Request) bool {
	if req.Cmd == memcache.CmdCas {
		return true
	}
	if req.Cmd.IsMeta() {
		for _, a := range req.Args {
			if len(a) > 0 && a[0] == 'C' {
				return true
			}
		}
	}
	return false
}

// replicate sends a write to every replica of its key.
func (c *client) replicate(pl *pool, p *pending) {
	if comparesCas(&p.req) {
		p.answerError(ErrCasReplicas)
		p.left.Store(1)
		p.opDone(nil)
		return
	}
	pli := pl.place.Load()
	if len(pli.live) == 0 {
		o := p.newOp(p.req.Cmd, time.Time{})
		p.left.Store(1)
		send(pl, nil, o)
		return
	}
	p.idx, p.nodeBuf = pli.replicas(p.idx[:0], p.nodeBuf, p.req.Key(0), pl.cfg.Replicas)
	deadline := time.Now().Add(ms(pl.cfg.Timeout))
	for range p.idx {
		o := p.newOp(p.req.Cmd, deadline)
		o.buf = memcache.AppendRequest(o.buf[:0], &p.req)
	}
	p.replicated = true
	p.left.Store(int32(len(p.ops)))
	for i, o := range p.ops {
		send(pl, pli.live[p.idx[i]], o)
	}
}

// send sends o to b, or fails it at once when b is nil.
func send(pl *pool, b *backend, o *op) {
	switch {
	case b == nil:
		o.finish(ErrNoServers)
	default:
		b.send(o)
	}
}

// multiGet splits a retrieval over the servers that own its keys, one op
// per server, each carrying that server's keys in request order.
func (c *client) multiGet(pl *pool, p *pending) {
	req := &p.req
	deadline := time.Now().Add(ms(pl.cfg.Timeout))
	pli := pl.place.Load()
	var owners [16]*backend
	own := owners[:0]
	for i := range req.Keys {
		var b *backend
		switch {
		case pl.cfg.Replicas > 1:
			b = pl.readReplica(p, req.Key(i))
		case len(pli.live) > 0:
			b = pli.live[pli.pick.Index(req.Key(i))]
		}
		oi := 0
		for oi < len(own) && own[oi] != b {
			oi++
		}
		if oi == len(own) {
			own = append(own, b)
			o := p.newOp(req.Cmd, deadline)
			o.buf = append(o.buf[:0], req.Cmd.String()...)
			if req.Cmd == memcache.CmdGat || req.Cmd == memcache.CmdGats {
				o.buf = append(o.buf, ' ')
				o.buf = strconv.AppendInt(o.buf, req.Exptime, 10)
			}
		}
		o := p.ops[oi]
		o.buf = append(o.buf, ' ')
		o.buf = append(o.buf, req.Keys[i]...)
		p.order = append(p.order, oi)
	}
	p.left.Store(int32(len(p.ops)))
	for i, o := range p.ops {
		o.buf = append(o.buf, "\r\n"...)
		send(pl, own[i], o)
	}
}

// broadcast sends flush_all to every server of the pool.
func (c *client) broadcast(pl *pool, p *pending) {
	deadline := time.Now().Add(ms(pl.cfg.Timeout))
	for range pl.backends {
		o := p.newOp(p.req.Cmd, deadline)
		o.buf = memcache.AppendRequest(o.buf[:0], &p.req)
	}
	p.left.Store(int32(len(p.ops)))
	for i, o := range p.ops {
		send(pl, pl.backends[i], o)
	}
}
