package proxy

import (
	"bytes"

	"github.com/kolco-dev/kolco/proxy/memcache"
	"github.com/kolco-dev/kolco/sim/trace"
)

// A memcached pool's hot-key cache (see pool_hotkeys.go): a get of one
// cached key is answered from a value read at most staleness before; one
// that finds none goes to its server, and its reply is stored once it is
// written to the client. A write of a key through this proxy - any command
// that changes its value or its life (set, cas, delete, incr, touch, ms,
// md, ma, ...) - drops its value as it is sent and again as it is
// answered, so that a read sent before the write and answered after it
// cannot store the older value (its generation has passed); a flush_all
// drops every value. gets, gat and mg are not answered from the cache:
// their replies carry a cas value or what the flags ask, which a stored
// get's reply does not say.

// mcHot is a memcached request's part in its pool's hot-key cache: the
// ticket of a get of a cached key, to store its reply, and whether the
// cache answered.
type mcHot struct {
	ticket hotTicket
	hit    bool
}

// read returns the cached value that answers req, a request that came at
// now, or nil; for a get of a cached key that it does not answer it
// keeps the ticket to store the reply with. It drops what the cache holds
// of the keys req writes.
func (h *mcHot) read(p *pool, req *memcache.Request, now int64, sc *routeScratch) []byte {
	if req.Cmd != memcache.CmdGet || len(req.Keys) != 1 {
		h.write(p, req)
		return nil
	}
	pl := p.place.Load()
	owners := pl.route(req.Key(0), false, sc)
	if len(owners) == 0 {
		return nil
	}
	v, t := p.hot.read(req.Key(0), pl, owners[0], now)
	h.ticket, h.hit = t, v != nil
	return v
}

// write drops what the pool's cache holds of the keys req writes.
func (h *mcHot) write(p *pool, req *memcache.Request) {
	switch {
	case req.Cmd == memcache.CmdFlushAll:
		p.hot.invalidateAll()
	case len(req.Keys) == 1 && writesKey(req):
		p.hot.invalidate(req.Key(0))
	}
}

// done, once the reply to req is written, stores the server's reply to a
// get that kept a ticket - when it is one server's reply as it came,
// plain - or drops again what req wrote. The caller checks that the pool
// keeps a cache (p.hot): a request of a pool that keeps none, which read
// nothing of it, never comes here.
func (h *mcHot) done(p *pool, req *memcache.Request, ops []*op, plain bool) {
	switch {
	case h.hit:
	case h.ticket.e == nil:
		h.write(p, req)
	case plain && len(ops) == 1 && ops[0].err == nil && !memcache.IsErrorReply(ops[0].reply):
		p.hot.store(h.ticket, ops[0].reply)
	default:
		p.hot.store(h.ticket, nil) // stores nothing: ends a refresh
	}
	*h = mcHot{}
}

// sample notes in the traffic sample a get the cache answered with
// reply, as a server's reply would be noted: the cache's keys are the
// sample's hottest, and stay so only while their reads are counted.
func (h *mcHot) sample(t *trafficSample, req *memcache.Request, reply []byte, now int64) {
	size, result := int64(-1), trace.Miss
	if bytes.HasPrefix(reply, []byte("VALUE ")) {
		size, result = valueSize(reply), trace.Hit
	}
	t.record(now, req.Key(0), size, req.Cmd.String(), trace.Read, result)
}
