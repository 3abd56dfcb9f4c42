package proxy

import (
	"bytes"
	"fmt"
	"strconv"
	"time"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// Commands over the whole keyspace: SCAN, KEYS and DBSIZE ask every server
// of the pool, on its shared connections, once the client's earlier
// requests are answered. KEYS lists every server's keys, DBSIZE sums
// their counts. SCAN walks the servers one after another with one cursor:
// its low byte is the server's index in the pool, the rest that server's
// own cursor, so that a client's cursor goes on where it stopped and ends
// (0) after the last server's. A scan spans the pool as it was when each
// call was made: a change of the servers during a scan may make it miss
// or repeat keys, which SCAN promises not to do on one server.

// scanShift is the bits of a SCAN cursor that name a server.
const scanShift = 8

// every serves a command over every server into r's reply.
func (c *redisClient) every(p *pool, r *redisRequest) {
	if !c.endRound() {
		r.answerError(errClientGone)
		return
	}
	req := &r.req
	switch req.Cmd.Name() {
	case "scan":
		c.scan(p, r)
		return
	case "script":
		c.script(p, r)
		return
	case "randomkey":
		randomKey(p, r, c.cs.proto)
		return
	case "flushdb", "flushall":
		flush(p, r)
		return
	case "info":
		peers := []*client{c.client}
		if c.peers != nil {
			peers = c.peers()
		}
		redisInfo(p, r, c.cs.proto, c.conn.LocalAddr(), peers)
		return
	}
	var total int64
	var keys [][]byte
	for _, b := range p.backends {
		reply, err := askShared(p, b, redis.AppendRequest(nil, req))
		if err != nil || redis.IsError(reply) {
			r.local = replyOrError(r.local, reply, err)
			return
		}
		if n, ok := redis.Integer(reply); ok {
			total += n
			continue
		}
		_, elems, err := readArray(reply)
		if err != nil {
			r.answerError(err)
			return
		}
		for _, e := range elems {
			keys = append(keys, []byte(e))
		}
	}
	if req.Cmd.Name() == "dbsize" {
		r.local = redis.AppendInt(r.local, total)
		return
	}
	r.local = redis.AppendArgs(r.local, keys)
}

// replyOrError appends a server's error reply, or err's.
func replyOrError(dst, reply []byte, err error) []byte {
	if err != nil {
		return appendRedisError(dst, err)
	}
	return append(dst, reply...)
}

// scan serves SCAN cursor [MATCH pattern] [COUNT n] [TYPE t] over every
// server.
func (c *redisClient) scan(p *pool, r *redisRequest) {
	args := r.req.Args
	cursor, err := strconv.ParseUint(string(args[1]), 10, 64)
	n := uint64(len(p.backends))
	switch {
	case err != nil:
		r.local = redis.AppendError(r.local, "ERR invalid cursor")
		return
	case n >= 1<<scanShift:
		r.local = redis.AppendError(r.local, fmt.Sprintf("ERR 'scan' over %d servers: a cursor names at most %d (see docs/proxy.md)", n, 1<<scanShift-1))
		return
	}
	index, own := cursor&(1<<scanShift-1), cursor>>scanShift
	if index >= n {
		r.local = append(r.local, "*2\r\n$1\r\n0\r\n*0\r\n"...) // past the last server: done
		return
	}
	fwd := append([][]byte{args[0], strconv.AppendUint(nil, own, 10)}, args[2:]...)
	reply, err := askShared(p, p.backends[index], redis.AppendArgs(nil, fwd))
	if err != nil || redis.IsError(reply) {
		r.local = replyOrError(r.local, reply, err)
		return
	}
	next, keys, err := redis.ParseScan(reply)
	if err != nil {
		r.answerError(err)
		return
	}
	nextOwn, err := strconv.ParseUint(string(next), 10, 64)
	switch {
	case err != nil || nextOwn >= 1<<(64-scanShift):
		r.answerError(fmt.Errorf("%w: a SCAN cursor of %q, too large to share with a server's index", redis.ErrBadReply, next))
		return
	case nextOwn == 0:
		index++ // this server is done: the next one's start
		if index == n {
			index = 0
		}
	}
	out := nextOwn<<scanShift | index
	r.local = redis.AppendArrayHeader(r.local, 2)
	r.local = redis.AppendBulk(r.local, strconv.AppendUint(nil, out, 10))
	r.local = redis.AppendArgs(r.local, keys)
}

// askShared sends req to b on the pool's shared connections and waits for
// its reply, within the pool's timeout.
func askShared(p *pool, b *backend, req []byte) ([]byte, error) {
	if b.health.isDown() {
		return nil, b.downErr
	}
	done := make(chan struct{})
	ro := newRedisOp(func(*op) { close(done) })
	ro.buf, ro.deadline = req, time.Now().Add(p.cfg.Timeout)
	b.send(&ro.op)
	<-done
	if ro.err != nil {
		return nil, ro.err
	}
	return bytes.Clone(ro.reply), nil
}

// script serves SCRIPT LOAD, EXISTS and FLUSH on every server, so that
// EVALSHA finds a script loaded through the proxy whichever server its
// keys are on: LOAD answers the servers' digest, EXISTS 1 for a script
// every server has, FLUSH +OK once every server flushed. Its other
// subcommands are refused.
func (c *redisClient) script(p *pool, r *redisRequest) {
	args := r.req.Args
	sub := string(bytes.ToLower(args[1]))
	if sub != "load" && sub != "exists" && sub != "flush" {
		r.local = redis.AppendError(r.local, "ERR 'script "+sub+"' is not supported by the proxy: script and function management")
		return
	}
	var first []byte
	var all []bool // EXISTS: every server has the script
	for _, b := range p.backends {
		reply, err := askShared(p, b, redis.AppendRequest(nil, &r.req))
		if err != nil || redis.IsError(reply) {
			r.local = replyOrError(r.local, reply, err)
			return
		}
		if first == nil {
			first = reply
		}
		if sub != "exists" {
			continue
		}
		_, has, err := readArray(reply)
		if err != nil {
			r.answerError(err)
			return
		}
		if all == nil {
			all = make([]bool, len(has))
			for i := range all {
				all[i] = true
			}
		}
		for i := range min(len(all), len(has)) {
			all[i] = all[i] && has[i] == "1"
		}
	}
	switch {
	case first == nil:
		r.answerError(ErrNoServers)
		return
	case sub != "exists":
		r.local = append(r.local, first...)
		return
	}
	r.local = redis.AppendArrayHeader(r.local, len(all))
	for _, has := range all {
		r.local = redis.AppendInt(r.local, int64(b2i(has)))
	}
}
