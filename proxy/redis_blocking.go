package proxy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// Blocking commands (BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BZPOPMIN, BZPOPMAX,
// BLMPOP, BZMPOP, and XREAD and XREADGROUP with BLOCK) wait on their server until a key has something, up to their timeout:
// on the pool's shared connections one would hold every request queued
// behind it. Each is sent instead on a server connection of its own,
// opened for it and closed once it is answered, after the client's
// earlier requests are answered (and, in a store, its keys moved); its
// keys must be on one server. redis_blocking_connections bounds how many
// wait at once in the pool, and one past it is refused at once. While one
// waits, the client's connection is watched: a client that closes ends its
// command, whose server connection is closed, so that a value the server
// would pop for it is not popped for nobody.

// redisPoolState is what the Redis front keeps of a pool while it runs.
type redisPoolState struct {
	// replicas is the tracker of a pool with replica reads.
	replicas atomic.Pointer[replicaTracker]
	// blocking counts the blocking commands waiting.
	blocking atomic.Int64
}

// redisStateOf returns the front's state of p, made on first use.
func redisStateOf(p *pool) *redisPoolState {
	if st, ok := p.frontState.Load().(*redisPoolState); ok {
		return st
	}
	p.frontState.CompareAndSwap(nil, &redisPoolState{})
	return p.frontState.Load().(*redisPoolState)
}

// blockingLimit is the pool's redis_blocking_connections.
func blockingLimit(cfg *PoolConfig) int64 {
	if cfg.RedisBlockingConnections == 0 {
		return 100
	}
	return int64(cfg.RedisBlockingConnections)
}

var errBlockCrossServer = errors.New("a blocking command's keys must all be on one server, and these map to different servers; hash tags can keep them on one ({user1}:a, {user1}:b)")

// block serves a blocking command on a server connection of its own; it
// reports false when r's reply comes from the pool's connections.
func (c *redisClient) block(p *pool, r *redisRequest, rd *redis.Reader) bool {
	req := &r.req
	if req.NumKeys() == 0 {
		// XREAD without STREAMS or with an odd list: the server's own
		// error, from any server.
		if b := anyServer(p.backends); b != nil {
			c.sendWhole(p, r, b)
			return false
		}
		r.answerError(ErrNoServers)
		return true
	}
	b, err := c.keysServer(p, req.NumKeys(), req.Key)
	if errors.Is(err, errTxCrossServer) {
		err = errBlockCrossServer
	}
	if err != nil {
		r.local = redis.AppendError(r.local, "ERR keys of '"+req.Cmd.Name()+"': "+withoutPrefix(err))
		return true
	}
	arg, millis, blocks := req.BlockArg()
	if !blocks {
		// XREAD and XREADGROUP without BLOCK: on the shared
		// connections, once the keys are where they are read.
		if c.settleKeys(p, r, req.NumKeys(), req.Key) {
			c.sendWhole(p, r, b)
			return false
		}
		return true
	}
	wait, ok := blockTimeout(arg, millis)
	if !ok {
		// The server's own answer to a bad timeout, on the shared
		// connections: it does not block.
		c.sendWhole(p, r, b)
		return false
	}
	st := redisStateOf(p)
	if limit := blockingLimit(p.cfg); st.blocking.Add(1) > limit {
		st.blocking.Add(-1)
		r.local = redis.AppendError(r.local, fmt.Sprintf("ERR '%s' would be blocking command %d of the pool, over redis_blocking_connections %d: each waits on a server connection of its own",
			req.Cmd.Name(), limit+1, limit))
		return true
	}
	defer st.blocking.Add(-1)
	if !c.settleKeys(p, r, req.NumKeys(), req.Key) {
		return true
	}
	reply, err := c.blockOn(p, b, redis.AppendRequest(nil, req), wait, rd)
	if err != nil {
		r.answerError(err)
	} else {
		r.local = append(r.local, reply...)
	}
	return true
}

// blockTimeout reads a blocking command's timeout, in seconds, or in
// whole milliseconds (XREAD's BLOCK), as redis-server does: 0 waits for
// ever.
func blockTimeout(arg []byte, millis bool) (time.Duration, bool) {
	if millis {
		ms, err := strconv.ParseInt(string(arg), 10, 64)
		if err != nil || ms < 0 || ms > 1e12 {
			return 0, false
		}
		return time.Duration(ms) * time.Millisecond, true
	}
	f, err := strconv.ParseFloat(string(arg), 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) || f > 1e9 {
		return 0, false
	}
	return time.Duration(f * float64(time.Second)), true
}

// blockOn sends req on a connection of its own to b and waits for its
// reply: up to wait and the pool's timeout beyond it, or for ever when
// wait is 0, unless the client closes first.
func (c *redisClient) blockOn(p *pool, b *backend, req []byte, wait time.Duration, rd *redis.Reader) ([]byte, error) {
	conn, err := redisDial(context.Background(), b, c.cs.proto)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	pin := &redisPin{b: b, conn: conn, rr: redis.NewReplyReader(conn, redis.ReplyLimits{MaxBulk: p.cfg.MaxValueSize, RESP3: c.cs.proto == redis.RESP3})}
	// The client's connection is watched while the command waits: a
	// close ends it. A request the client pipelines after it only ends
	// the watch.
	watched := make(chan error, 1)
	go func() { watched <- rd.Wait() }()
	gone := make(chan struct{})
	go func() {
		if err := <-watched; err != nil && !isTimeout(err) {
			conn.Close()
		}
		close(gone)
	}()
	timeout := 100 * 365 * 24 * time.Hour // for ever
	if wait > 0 {
		timeout = wait + p.cfg.Timeout
	}
	reply, err := pin.do(req, 1, timeout)
	_ = c.conn.SetReadDeadline(time.Now()) // ends the watch
	<-gone
	_ = c.conn.SetReadDeadline(c.readDeadline())
	if err != nil {
		return nil, serverError(b.addr, "blocking command", err)
	}
	return reply, nil
}
