package proxy

import (
	"math/rand/v2"
	"strings"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// RANDOMKEY and FLUSHDB/FLUSHALL over every server.
//
// RANDOMKEY asks each server for its DBSIZE and then one server, chosen
// with a chance in proportion to its keys, for a random key of its own:
// every key of the pool is as likely as on one server holding them all
// (a server picked evenly would favour the keys of small servers). A
// server that has emptied between the two questions is asked again, up
// to three times, and an empty pool answers the null.
//
// FLUSHDB and FLUSHALL empty every server's database of the pool when the
// pool has flush_all: broadcast, and are refused otherwise: one typed at
// the wrong prompt would empty every server. Both send FLUSHDB (with
// ASYNC or SYNC as given), since the clients see one database: FLUSHALL
// would also empty the servers' other databases, which may be other
// pools' (redis_db). In a store whose keys are moving the flush waits for
// no move: it answers -TRYAGAIN until the move is done, so that no key
// in flight outlives it.

// randomKey answers RANDOMKEY over every server of p.
func randomKey(p *pool, r *redisRequest, proto redis.Proto) {
	for range 3 {
		var sizes []int64
		var total int64
		for _, b := range p.backends {
			reply, err := askShared(p, b, []byte("*1\r\n$6\r\nDBSIZE\r\n"))
			n, ok := redis.Integer(reply)
			if err != nil || !ok {
				r.local = replyOrError(r.local, reply, err)
				return
			}
			sizes, total = append(sizes, n), total+n
		}
		if total == 0 {
			r.local = redis.AppendNull(r.local, proto)
			return
		}
		pick := rand.Int64N(total)
		i := 0
		for ; pick >= sizes[i]; i++ {
			pick -= sizes[i]
		}
		reply, err := askShared(p, p.backends[i], []byte("*1\r\n$9\r\nRANDOMKEY\r\n"))
		if _, isNil, _ := redis.Bulk(reply); err == nil && isNil {
			continue // it emptied meanwhile
		}
		r.local = replyOrError(r.local, reply, err)
		return
	}
	r.local = redis.AppendNull(r.local, proto)
}

// flush answers FLUSHDB and FLUSHALL [ASYNC|SYNC] over every server of p.
func flush(p *pool, r *redisRequest) {
	args := r.req.Args
	name := strings.ToUpper(string(args[0]))
	switch {
	case p.cfg.FlushAll != "broadcast":
		r.local = redis.AppendError(r.local, "ERR '"+strings.ToLower(name)+"' is not supported by the proxy: commands over the whole keyspace (it empties every server: set flush_all: broadcast to allow it)")
		return
	case len(args) > 2 || len(args) == 2 && !strings.EqualFold(string(args[1]), "async") && !strings.EqualFold(string(args[1]), "sync"):
		r.local = redis.AppendError(r.local, "ERR syntax error")
		return
	case p.place.Load().move != nil:
		r.local = redis.AppendError(r.local, "TRYAGAIN the store's keys are moving: "+name+" waits until the move is done")
		return
	}
	req := redis.AppendArgs(nil, append([][]byte{[]byte("FLUSHDB")}, args[1:]...))
	for _, b := range p.backends {
		reply, err := askShared(p, b, req)
		if err != nil || redis.IsError(reply) {
			r.local = replyOrError(r.local, reply, err)
			return
		}
	}
	r.local = redis.AppendOK(r.local)
}
