package proxy

import (
	"fmt"
	"time"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// The commands the client's reader treats apart, looked up once.
var (
	redisAuth = redis.Lookup("auth")
	redisQuit = redis.Lookup("quit")
)

// dispatch starts serving one parsed request: it answers what the proxy
// answers itself (AUTH, PING, ECHO, QUIT, SELECT, HELLO, and -NOAUTH
// before the client authenticates, as nutcracker with redis_auth) and
// sends the rest to the servers its keys are on.
func (c *redisClient) dispatch(p *pool, r *redisRequest, rd *redis.Reader) {
	r.pool, r.start = p, time.Now()
	req := &r.req
	switch {
	case req.Cmd == redisAuth:
		var ok bool
		if r.local, ok = redis.AppendAuth(r.local, req, p.cfg.clientPassword()); ok && !c.authed {
			c.authed = true
			rd.SetLimits(c.limits(p))
		}
	case !c.authed && req.Cmd != redisQuit:
		r.local = append(r.local, redis.NoAuth...)
	case req.Cmd.Class() == redis.ClassLocal:
		r.local, r.close = redis.AppendLocal(r.local, req)
	case p.cfg.MaxKeys > 0 && req.NumKeys() > p.cfg.MaxKeys:
		r.local = redis.AppendError(r.local, fmt.Sprintf("ERR %d keys in one request, over the proxy's max_keys %d", req.NumKeys(), p.cfg.MaxKeys))
	default:
		c.forward(p, r)
		return
	}
	r.ready()
}

// forward splits a request by the servers its keys are on (see
// redis.Splitter) and sends each part to its server. A command that cannot
// be split whose keys are on several servers is refused, as are the
// commands no proxy can serve.
func (c *redisClient) forward(p *pool, r *redisRequest) {
	c.place, c.none = p.place.Load(), len(p.backends)
	if err := r.split.Split(&r.req, c.serverOf); err != nil {
		if re, ok := err.(*redis.Error); ok {
			r.local = append(r.local, re.Reply...)
		} else {
			r.answerError(err)
		}
		r.ready()
		return
	}
	parts := r.split.Parts()
	deadline := r.start.Add(p.cfg.Timeout)
	for i := range parts {
		o := r.newOp(deadline)
		o.buf = r.split.AppendPart(o.buf[:0], i)
		o.batch = &c.batch  // written at the round's end
		o.charge = c.charge // its reply's bulk strings are charged
	}
	r.left.Store(int32(len(parts)))
	for i, part := range parts {
		var b *backend
		switch {
		case part.Server == redis.AnyServer:
			b = p.anyServer()
		case part.Server < len(p.backends):
			b = p.backends[part.Server]
		}
		if b == nil {
			r.ops[i].finish(ErrNoServers)
			continue
		}
		b.send(r.ops[i])
	}
}

// server returns the index of the server that owns key, or c.none when no
// server is live. It is the Splitter's function from key to server.
func (c *redisClient) server(key []byte) int {
	owners := c.place.route(key, false, &c.route)
	if len(owners) == 0 {
		return c.none
	}
	return owners[0].index
}

// anyServer returns a server for a command that touches no key (COMMAND):
// the first that is not marked down, or nil.
func (p *pool) anyServer() *backend {
	for _, b := range p.backends {
		if !b.health.isDown() {
			return b
		}
	}
	return nil
}
