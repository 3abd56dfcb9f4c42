package proxy

import (
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// What the proxy answers itself, or sends to every server or to one
// server of its choosing, rather than by key: quit, stats, verbosity, mn,
// flush_all and version.

// versionKey is what nutcracker hashes to route "version", a request with
// no key of its own (msg_set_placeholder_key in twemproxy).
var versionKey = []byte("placeholder")

// version forwards "version" to a server that is not marked down: the
// owner of the key "placeholder", where nutcracker sends it, else the first
// live server.
// The reply is that server's, so that a client's liveness check fails
// when the servers do, rather than read a healthy version from the proxy
// in front of dead servers.
func (r *mcRequest) version(p *pool) {
	var to *backend
	if owners := p.place.Load().route(versionKey, false, &r.route); len(owners) > 0 && !owners[0].health.isDown() {
		to = owners[0]
	} else {
		for _, b := range p.backends {
			if !b.health.isDown() {
				to = b
				break
			}
		}
	}
	if to == nil {
		r.answerError(ErrNoServers)
		r.ready()
		return
	}
	o := r.addOp(r.req.Cmd, r.start.Add(p.cfg.Timeout))
	o.buf = memcache.AppendRequest(o.buf[:0], &r.req)
	r.left.Store(1)
	to.send(&o.op)
}

// broadcast sends flush_all to every server of the pool.
func (r *mcRequest) broadcast(p *pool) {
	p.outages.spill() // what a server out misses of it is every key
	deadline := r.start.Add(p.cfg.Timeout)
	for range p.backends {
		o := r.addOp(r.req.Cmd, deadline)
		o.buf = memcache.AppendRequest(o.buf[:0], &r.req)
	}
	r.left.Store(int32(len(r.ops)))
	for i, o := range r.ops {
		p.backends[i].send(o)
	}
}

// appendStats appends the reply to "stats": the pool's own figures, in
// memcached's STAT format.
func (p *pool) appendStats(dst []byte) []byte {
	s := p.stats
	u := func(name string, v uint64) { dst = memcache.AppendStat(dst, name, v) }
	u("uptime", uint64(time.Since(s.started).Seconds()))
	u("time", uint64(time.Now().Unix()))
	u("curr_connections", uint64(max(s.currConns.Load(), 0)))
	u("total_connections", uint64(s.totalConns.Load()))
	u("rejected_connections", uint64(s.rejectedConns.Load()))
	u("client_errors", s.clientErrs.Load())
	count := func(c memcache.Command) uint64 { return s.commandCount(int(c)) }
	var total uint64
	for c := range s.cmds {
		total += s.commandCount(c)
	}
	u("cmd_total", total)
	u("cmd_get", count(memcache.CmdGet)+count(memcache.CmdGets)+count(memcache.CmdMetaGet))
	u("cmd_set", count(memcache.CmdSet)+count(memcache.CmdMetaSet))
	u("cmd_touch", count(memcache.CmdTouch))
	// Servers not marked down: under fail-fast and with replicas, the
	// placement keeps down servers in their places, so its length is not
	// the count.
	live := 0
	for _, b := range p.backends {
		if !b.health.isDown() {
			live++
		}
	}
	u("servers", uint64(len(p.backends)))
	u("servers_live", uint64(live))
	for _, b := range p.backends {
		prefix := "server:" + b.name() + ":"
		u(prefix+"requests", b.stats.requests.Load())
		u(prefix+"errors", b.stats.errors.Load())
		u(prefix+"ejections", b.stats.ejections.Load())
		down := uint64(0)
		if b.health.isDown() {
			down = 1
		}
		u(prefix+"down", down)
	}
	return append(dst, "END\r\n"...)
}
