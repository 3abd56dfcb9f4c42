package proxy

import (
	"bytes"
	"time"

	"github.com/kolco-dev/kolco/sim/trace"
)

// What a Redis request tells the pool's traffic sample (see
// pool_traffic.go): each of its keys with the command, what the command
// does to them as kolco's trace format reads it (sim/trace), and for a
// read of one key answered by one server, whether it found a value and
// its size (a bulk string, or its absence). The results of other reads
// (MGET merged from several servers, HGET, LRANGE) are left unknown.

// sampleTraffic notes a request whose reply was written in its pool's
// traffic sample. The caller checks that the pool keeps one (r.pool.traffic),
// so that a request of a pool that keeps none never comes here.
func (r *redisRequest) sampleTraffic() {
	p := r.pool
	if (len(r.ops) == 0 && !r.hot) || r.req.Cmd == nil || r.req.NumKeys() == 0 {
		return
	}
	name := r.req.Cmd.Name()
	op := trace.OpOf(name)
	size, result := int64(-1), trace.Unknown
	switch {
	case r.hot: // the hot-key cache answered it (see redis_hotkeys.go)
		size, result = bulkResult(r.local)
	case op == trace.Read && len(r.ops) == 1 && r.req.NumKeys() == 1:
		if o := r.ops[0]; o.err == nil {
			size, result = bulkResult(o.reply)
		}
	case name == "set" && len(r.req.Args) > 2:
		size = int64(len(r.req.Args[2]))
	}
	notes := r.notes[:0]
	for i := range r.req.NumKeys() {
		notes = append(notes, trafficNote{key: r.req.Key(i), size: size, result: result})
	}
	p.traffic.recordAll(time.Now().UnixNano(), name, op, notes)
	r.notes = notes
}

// bulkResult reads a reply to a read of one key: a bulk string is a hit
// of its length, a null (RESP2's $-1 and *-1, RESP3's _) a miss; any other
// reply says neither.
func bulkResult(reply []byte) (int64, trace.Result) {
	switch {
	case bytes.HasPrefix(reply, []byte("$-1\r\n")), bytes.HasPrefix(reply, []byte("*-1\r\n")), bytes.HasPrefix(reply, []byte("_\r\n")):
		return -1, trace.Miss
	case len(reply) > 1 && reply[0] == '$':
		return leadingNumber(reply[1:]), trace.Hit
	}
	return -1, trace.Unknown
}
