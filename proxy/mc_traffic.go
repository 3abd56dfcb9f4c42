package proxy

import (
	"bytes"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
	"github.com/kolco-dev/kolco/sim/trace"
)

// What a memcached request tells the pool's traffic sample (see
// pool_traffic.go): each key with the command, the value's size and, for
// a read, whether the client got a value - from its server, or in a
// migration window from the server that held it before.

// mcOps is what each memcached command does to its keys, as the trace
// format names it (sim/trace).
var mcOps = [...]trace.Op{
	memcache.CmdGet: trace.Read, memcache.CmdGets: trace.Read, memcache.CmdGat: trace.Read, memcache.CmdGats: trace.Read,
	memcache.CmdMetaGet: trace.Read,
	memcache.CmdSet:     trace.Write, memcache.CmdAdd: trace.Write, memcache.CmdReplace: trace.Write, memcache.CmdAppend: trace.Write,
	memcache.CmdPrepend: trace.Write, memcache.CmdCas: trace.Write, memcache.CmdIncr: trace.Write, memcache.CmdDecr: trace.Write,
	memcache.CmdMetaSet: trace.Write, memcache.CmdMetaArithmetic: trace.Write,
	memcache.CmdDelete: trace.Delete, memcache.CmdMetaDelete: trace.Delete,
	memcache.CmdMetaDebug: trace.Other,
}

// sampleTraffic notes a request whose reply was written in its pool's
// traffic sample. The caller checks that the pool keeps one (r.pool.traffic),
// so that a request of a pool that keeps none never comes here.
func (r *mcRequest) sampleTraffic() {
	p := r.pool
	if (len(r.ops) == 0 && !r.hot.hit) || len(r.req.Keys) == 0 {
		return
	}
	t, cmd, now := p.traffic, r.req.Cmd, time.Now().UnixNano()
	if r.hot.hit {
		r.hot.sample(t, &r.req, r.local, now)
		return
	}
	if int(cmd) >= len(mcOps) || cmd == memcache.CmdTouch {
		if cmd == memcache.CmdTouch {
			t.record(now, r.req.Key(0), -1, cmd.String(), trace.Other, trace.Unknown)
		}
		return
	}
	op := mcOps[cmd]
	switch {
	case cmd.IsRetrieval():
		r.sampleRetrieval(t, now)
	case cmd == memcache.CmdMetaGet:
		if o := r.ops[0]; o.err == nil {
			size, res := metaResult(o.reply, r.warm.fill(0) != nil)
			t.record(now, r.req.Key(0), size, cmd.String(), op, res)
		}
	case cmd.IsStorage():
		t.record(now, r.req.Key(0), int64(len(r.req.Data)), cmd.String(), op, trace.Unknown)
	default:
		t.record(now, r.req.Key(0), -1, cmd.String(), op, trace.Unknown)
	}
}

// sampleRetrieval notes each key of a get, gets, gat or gats.
func (r *mcRequest) sampleRetrieval(t *trafficSample, now int64) {
	name := r.req.Cmd.String()
	warmRead := r.warm != nil && r.warm.active && r.warm.class == warmRead
	if len(r.req.Keys) > 1 && (len(r.ops) > 1 || warmRead) {
		// Merged from several servers: the splitter finds each key's
		// value again, as writeMerged did.
		r.split.Begin(r.replies)
		notes := r.notes[:0]
		for i := range r.req.Keys {
			v := r.split.Value(i)
			if v == nil {
				v = r.warm.fill(i)
			}
			notes = append(notes, trafficNote{key: r.req.Keys[i], size: valueSize(v), result: found(v)})
		}
		t.recordAll(now, name, trace.Read, notes)
		r.notes = notes
		return
	}
	o := r.ops[0]
	if o.err != nil || memcache.IsErrorReply(o.reply) {
		return // the client got an error, not a hit or a miss
	}
	spans, next := mcOf(o).spans, 0
	notes := r.notes[:0]
	for i, key := range r.req.Keys {
		var v []byte
		if next < len(spans) && bytes.Equal(o.reply[spans[next].KeyStart:spans[next].KeyEnd], key) {
			v = o.reply[spans[next].Start:spans[next].End]
			next++
		} else {
			v = r.warm.fill(i)
		}
		notes = append(notes, trafficNote{key: key, size: valueSize(v), result: found(v)})
	}
	t.recordAll(now, name, trace.Read, notes)
	r.notes = notes
}

// metaResult returns the value's size and the result of an mg's reply:
// VA with its size, HD a hit without a value, EN a miss; a value found
// in a migration window (filled) is a hit.
func metaResult(reply []byte, filled bool) (int64, trace.Result) {
	if filled {
		return -1, trace.Hit
	}
	switch {
	case bytes.HasPrefix(reply, []byte("VA ")):
		return leadingNumber(reply[3:]), trace.Hit
	case bytes.HasPrefix(reply, []byte("HD")):
		return -1, trace.Hit
	case bytes.HasPrefix(reply, []byte("EN")):
		return -1, trace.Miss
	}
	return -1, trace.Unknown
}

// found is the result of a read that found entry, or nil.
func found(entry []byte) trace.Result {
	if entry == nil {
		return trace.Miss
	}
	return trace.Hit
}

// valueSize returns the size of the value of a VALUE entry
// ("VALUE key flags bytes [cas]\r\n..."), or -1 for none.
func valueSize(entry []byte) int64 {
	if entry == nil {
		return -1
	}
	line := entry
	if i := bytes.IndexByte(line, '\r'); i >= 0 {
		line = line[:i]
	}
	for range 3 { // past VALUE, the key and the flags
		i := bytes.IndexByte(line, ' ')
		if i < 0 {
			return -1
		}
		line = line[i+1:]
	}
	return leadingNumber(line)
}
