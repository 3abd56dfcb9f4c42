package proxy

import (
	"bytes"
	"fmt"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// dispatch starts serving one parsed request: it answers what the proxy
// answers itself and forwards the rest to the servers.
func (p *pool) dispatch(r *request) {
	r.pool, r.start = p, time.Now()
	switch {
	case p.answer(r):
		r.ready()
	case r.req.Cmd == memcache.CmdVersion:
		p.version(r)
	default:
		p.forward(r)
	}
}

// versionKey is what nutcracker hashes to route "version", a request with
// no key of its own (msg_set_placeholder_key in twemproxy).
var versionKey = []byte("placeholder")

// version forwards "version" to a server that is not marked down: the
// owner of the key "placeholder", where nutcracker sends it, else the first
// live server.
// The reply is that server's, so that a client's liveness check fails
// when the servers do, rather than read a healthy version from the proxy
// in front of dead servers.
func (p *pool) version(r *request) {
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
	o := r.newOp(r.req.Cmd, r.start.Add(p.cfg.Timeout))
	o.buf = memcache.AppendRequest(o.buf[:0], &r.req)
	r.left.Store(1)
	to.send(o)
}

// answer answers a request the proxy answers itself, and reports whether
// r was one.
func (p *pool) answer(r *request) bool {
	req := &r.req
	switch req.Cmd {
	case memcache.CmdQuit:
		r.close = true
	case memcache.CmdStats:
		if len(req.Args) == 0 || len(req.Args) == 1 && string(req.Args[0]) == "proxy" {
			r.local = p.appendStats(r.local)
		} else {
			r.answerError(fmt.Errorf("%w %s", ErrStatsArgs, bytes.Join(req.Args, []byte(" "))))
		}
	case memcache.CmdVerbosity:
		if !req.Noreply {
			r.local = append(r.local, "OK\r\n"...)
		}
	case memcache.CmdMetaNoop:
		// Written only after every earlier reply, since replies keep order.
		r.local = append(r.local, "MN\r\n"...)
	case memcache.CmdFlushAll:
		if p.cfg.FlushAll == "broadcast" {
			return false
		}
		r.answerError(ErrFlushAllRefused)
	default:
		return false
	}
	return true
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
