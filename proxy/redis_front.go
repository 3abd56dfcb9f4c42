package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// redisFront is the Redis protocol's front: RESP2 from clients, commands
// routed by their keys (see redis.Splitter), as twemproxy's
// proto/nc_redis.c does for its core.
type redisFront struct{}

// errNotEmptied is empty's error: nothing empties a Redis server.
var errNotEmptied = errors.New("a Redis server is never emptied: its data may be all there is of it")

func (redisFront) empty(context.Context, *backend) error { return errNotEmptied }

// changes: a Redis pool's changes are cold and not swept (see
// checkRedis); a store's move carries its keys instead.
func (redisFront) changes(*PoolConfig) (int, time.Duration, int, bool) { return 0, 0, 0, false }

// sweeper: a Redis pool is not swept (see checkRedis).
func (redisFront) sweeper(*pool) func(*migration) { return nil }

// presweep: a Redis pool does not sweep (a store moves its keys instead).
func (redisFront) presweep(context.Context, *pool, *pool) error { return nil }

func (redisFront) errorReply(err error) []byte { return appendRedisError(nil, err) }

// startPool starts the replica reads of a pool that has them.
func (redisFront) startPool(ctx context.Context, p *pool) {
	if p.cfg.ReplicaReads.Enabled {
		startReplicaReads(ctx, p)
	}
	if p.hot != nil {
		startRedisHot(ctx, p)
	}
}

func (redisFront) commands() int { return redis.NumCommands() }

func (redisFront) commandName(i int) string { return redis.CommandByID(i).Name() }

// settle writes to b the values src holds of keys (DUMP and PTTL there,
// RESTORE ... REPLACE on b with the time to live left), and deletes b's
// copy of a key src holds none of, as a transaction
// on b that WATCH keeps from taking effect when another client of b wrote
// one of them since it was read: then each key is written alone, and one
// written meanwhile keeps that client's value. A key gate calls stale is
// left as b holds it.
func (redisFront) settle(ctx context.Context, b, src *backend, keys []string, gate func() (stale func(key string) bool, release func())) error {
	conn, err := redisDial(ctx, b, redis.RESP2)
	if err != nil {
		return err
	}
	defer conn.Close()
	watch := [][]byte{[]byte("WATCH")}
	for _, k := range keys {
		watch = append(watch, []byte(k))
	}
	if _, err := redisDo(conn, b, redis.AppendArgs(nil, watch), 1); err != nil {
		return err
	}
	values, err := redisDump(ctx, src, keys)
	if err != nil {
		return fmt.Errorf("reading what %s holds of them: %w", src.addr, err)
	}
	if gate != nil {
		stale, release := gate()
		defer release() // until b has stored what it is sent
		keys = slices.Clone(keys)
		n := 0
		for i, k := range keys {
			if !stale(k) {
				keys[n], values[n] = k, values[i]
				n++
			}
		}
		keys, values = keys[:n], values[:n]
		if n == 0 {
			return nil
		}
	}
	applied, err := redisExec(conn, b, keys, values)
	if err != nil || applied {
		return err
	}
	for i, k := range keys { // one of them changed on b: each alone
		if _, err := redisDo(conn, b, redis.AppendArgs(nil, [][]byte{[]byte("WATCH"), []byte(k)}), 1); err != nil {
			return err
		}
		if _, err := redisExec(conn, b, keys[i:i+1], values[i:i+1]); err != nil {
			return err
		}
	}
	return nil
}

// redisExec writes keys as values hold them in a transaction on conn,
// after a WATCH of them: RESTORE ... REPLACE, or DEL for a key that does
// not exist. It reports false when the transaction did not take effect,
// one of the keys having changed since the WATCH.
func redisExec(conn net.Conn, b *backend, keys []string, values []dumped) (bool, error) {
	req := redis.AppendArgs(nil, [][]byte{[]byte("MULTI")})
	for i, k := range keys {
		if values[i].data == nil {
			req = redis.AppendArgs(req, [][]byte{[]byte("DEL"), []byte(k)})
			continue
		}
		req = redis.AppendArgs(req, [][]byte{[]byte("RESTORE"), []byte(k), fmt.Append(nil, values[i].ttl), values[i].data, []byte("REPLACE")})
	}
	req = redis.AppendArgs(req, [][]byte{[]byte("EXEC")})
	replies, err := redisDo(conn, b, req, len(keys)+2)
	if err != nil {
		return false, err
	}
	exec := replies[len(replies)-1]
	if bytes.Equal(exec, []byte("*-1\r\n")) {
		return false, nil
	}
	if bytes.Contains(exec, []byte("\r\n-")) {
		return false, fmt.Errorf("%s: %q", b.addr, exec)
	}
	return true, nil
}

// heldKeys lists none: a Redis pool's changes are cold, and leave the
// copies of the keys they move where they were, swept by no change (see
// outages.sweepGained).
func (redisFront) heldKeys(context.Context, *backend, func([]byte) bool) ([]string, error) {
	return nil, nil
}

// dropCopies deletes keys from b, which held them for another server.
func (redisFront) dropCopies(ctx context.Context, b *backend, keys []string) error {
	args := [][]byte{[]byte("UNLINK")}
	for _, k := range keys {
		args = append(args, []byte(k))
	}
	_, err := redisAsk(ctx, b, redis.AppendArgs(nil, args), 1)
	return err
}

// dumped is a key's value as DUMP serializes it, and the milliseconds it
// has left to live (0 for none); nil data for a key that does not exist.
type dumped struct {
	data []byte
	ttl  int64
}

// redisDump reads keys from b with DUMP and PTTL.
func redisDump(ctx context.Context, b *backend, keys []string) ([]dumped, error) {
	var req []byte
	for _, k := range keys {
		req = redis.AppendArgs(req, [][]byte{[]byte("DUMP"), []byte(k)})
		req = redis.AppendArgs(req, [][]byte{[]byte("PTTL"), []byte(k)})
	}
	replies, err := redisAsk(ctx, b, req, 2*len(keys))
	if err != nil {
		return nil, err
	}
	out := make([]dumped, len(keys))
	for i := range keys {
		data, isNil, ok := redis.Bulk(replies[2*i])
		ttl, tok := redis.Integer(replies[2*i+1])
		if !ok || !tok {
			return nil, fmt.Errorf("%w: %q, %q to DUMP and PTTL", redis.ErrBadReply, replies[2*i], replies[2*i+1])
		}
		if !isNil && ttl != -2 { // -2: gone since the DUMP
			out[i] = dumped{data: data, ttl: max(ttl, 0)}
		}
	}
	return out, nil
}

// items asks the server for the DBSIZE of the pool's database.
func (redisFront) items(ctx context.Context, b *backend) (int64, error) {
	replies, err := redisAsk(ctx, b, []byte("*1\r\n$6\r\nDBSIZE\r\n"), 1)
	if err != nil {
		return 0, err
	}
	n, ok := bytes.CutPrefix(bytes.TrimSuffix(replies[0], []byte("\r\n")), []byte(":"))
	if !ok {
		return 0, fmt.Errorf("%w: %q to DBSIZE", redis.ErrBadReply, replies[0])
	}
	return strconv.ParseInt(string(n), 10, 64)
}

// instance returns the server's run_id, from INFO server.
func (redisFront) instance(ctx context.Context, b *backend) (string, error) {
	replies, err := redisAsk(ctx, b, redis.AppendArgs(nil, [][]byte{[]byte("INFO"), []byte("server")}), 1)
	if err != nil {
		return "", err
	}
	for line := range strings.SplitSeq(string(replies[0]), "\r\n") {
		if id, ok := strings.CutPrefix(line, "run_id:"); ok {
			return id, nil
		}
	}
	return "", fmt.Errorf("%w: INFO server without run_id", redis.ErrBadReply)
}

// redisAsk sends req, n requests, to b on a connection of its own, after
// the handshake, and returns their replies; an error reply is an error.
func redisAsk(ctx context.Context, b *backend, req []byte, n int) ([][]byte, error) {
	conn, err := redisDial(ctx, b, redis.RESP2)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return redisDo(conn, b, req, n)
}

// redisDial opens a connection of its own to b, after the handshake, that
// speaks proto.
func redisDial(ctx context.Context, b *backend, proto redis.Proto) (net.Conn, error) {
	timeout := b.pool.cfg.Timeout
	conn, err := b.dialOwn(ctx, timeout)
	if err != nil {
		return nil, err
	}
	if err := redisHandshake(b, conn, timeout, proto); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// redisDo sends req, n requests, on conn to b and returns their replies,
// within the pool's timeout; an error reply is an error.
func redisDo(conn net.Conn, b *backend, req []byte, n int) ([][]byte, error) {
	if err := conn.SetDeadline(time.Now().Add(b.pool.cfg.Timeout)); err != nil {
		return nil, err
	}
	if _, err := conn.Write(req); err != nil {
		return nil, err
	}
	rr := redis.NewReplyReader(conn, redis.ReplyLimits{MaxBulk: b.pool.cfg.MaxValueSize})
	replies := make([][]byte, n)
	for i := range replies {
		reply, _, err := rr.Read(nil, nil)
		if err != nil {
			return nil, err
		}
		if redis.IsError(reply) {
			return nil, fmt.Errorf("%s: %s", b.addr, bytes.TrimSpace(reply[1:]))
		}
		replies[i] = reply
	}
	return replies, nil
}

// handshakeRequest returns what the proxy sends on a new connection to a
// Redis server before any request: AUTH with the server's password and
// SELECT of redis_db, as nutcracker sends them; nil for none.
func handshakeRequest(b *backend) [][]byte {
	cfg := b.pool.cfg
	var reqs [][]byte
	if auth := cfg.serverAuth(b.node); auth != nil {
		args := [][]byte{[]byte("AUTH")}
		for _, a := range auth {
			args = append(args, []byte(a))
		}
		reqs = append(reqs, redis.AppendArgs(nil, args))
	}
	if cfg.RedisDB > 0 {
		reqs = append(reqs, redis.AppendArgs(nil, [][]byte{[]byte("SELECT"), fmt.Append(nil, cfg.RedisDB)}))
	}
	return reqs
}

// handshake sends the handshake requests on a new connection and checks
// their replies, within timeout. A server that refuses the AUTH is
// connected all the same, as nutcracker connects it: its replies to the
// requests that follow say so to the clients (-NOAUTH Authentication
// required.), word for word as through nutcracker, and the refusal is
// logged. A SELECT refused for any other reason than that AUTH fails the
// connect with [ErrRedisHandshake], where nutcracker would let the keys
// reach database 0; an AUTH refused because the server has no password is
// no failure, as it is none to nutcracker, whose redis_auth also sets the
// clients' password.
//
// A connection of the RESP3 dialect (1: see redisDialects) then sends
// HELLO 3, and fails the connect with [ErrRedisHandshake] when the server
// refuses it: a server older than Redis 6 has no RESP3 to give the clients
// that asked for it.
func (redisFront) handshake(b *backend, conn net.Conn, dialect uint8) error {
	return redisHandshake(b, conn, b.pool.cfg.Timeout, redisDialects[dialect])
}

// redisDialects are the protocols of a Redis pool's kinds of server
// connection (see op.dialect), and dialectOf the dialect of each
// protocol: the RESP2 clients' requests go on the pool's first
// server_connections, the RESP3 clients' on the next.
var (
	redisDialects = [...]redis.Proto{redis.RESP2, redis.RESP3}
	dialectOf     = [...]uint8{redis.RESP2: 0, redis.RESP3: 1}
)

// dialects: RESP2 and RESP3 (see redisDialects).
func (redisFront) dialects() int { return len(redisDialects) }

// redisHandshake is the handshake on conn, within timeout, for a
// connection that speaks proto.
func redisHandshake(b *backend, conn net.Conn, timeout time.Duration, proto redis.Proto) error {
	reqs := handshakeRequest(b)
	if len(reqs) == 0 && proto != redis.RESP3 {
		return nil
	}
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	if _, err := conn.Write(bytes.Join(reqs, nil)); err != nil {
		return serverError(b.addr, "handshake", err)
	}
	rr := redis.NewReplyReader(conn, redis.ReplyLimits{MaxReply: 64 << 10, RESP3: proto == redis.RESP3})
	authRefused := false
	for _, req := range reqs {
		reply, _, err := rr.Read(nil, nil)
		if err != nil {
			return serverError(b.addr, "handshake", err)
		}
		selecting := bytes.HasPrefix(req, []byte("*2\r\n$6\r\nSELECT"))
		switch {
		case bytes.Equal(reply, []byte("+OK\r\n")) || noPassword(reply):
			continue
		case !selecting:
			authRefused = true
			b.pool.log.Warn("the server refused the proxy's AUTH; its replies to the clients' requests say so, as through nutcracker",
				"server", b.addr, "reply", string(bytes.TrimSpace(reply)))
			continue
		case authRefused && bytes.HasPrefix(reply, []byte("-NOAUTH")):
			continue // it refuses every request: none reaches database 0
		}
		return &ServerError{Addr: b.addr, Err: fmt.Errorf("%w: SELECT %d: %s", ErrRedisHandshake, b.pool.cfg.RedisDB, bytes.TrimSpace(reply[1:]))}
	}
	if proto == redis.RESP3 {
		if err := helloThree(b, conn, rr); err != nil {
			return err
		}
	}
	return conn.SetDeadline(time.Time{})
}

// helloThree asks the server on conn for RESP3, its replies read by rr,
// and checks that it answers HELLO's map.
func helloThree(b *backend, conn net.Conn, rr *redis.ReplyReader) error {
	if _, err := conn.Write([]byte("*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n")); err != nil {
		return serverError(b.addr, "handshake", err)
	}
	reply, _, err := rr.Read(nil, nil)
	switch {
	case err != nil:
		return serverError(b.addr, "handshake", err)
	case len(reply) == 0 || reply[0] != '%':
		return &ServerError{Addr: b.addr, Err: fmt.Errorf("%w: HELLO 3: %s", ErrRedisHandshake, bytes.TrimSpace(reply))}
	}
	return nil
}

// noPassword reports whether a reply to AUTH says that the server has no
// password: redis-server 6 and later, and before.
func noPassword(reply []byte) bool {
	return bytes.HasPrefix(reply, []byte("-ERR AUTH <password> called without any password configured")) ||
		bytes.HasPrefix(reply, []byte("-ERR Client sent AUTH, but no password is set"))
}

// probe checks a Redis server on a connection of its own: the handshake,
// then PING, which a server loading its data answers with -LOADING.
func (redisFront) probe(ctx context.Context, b *backend) error {
	timeout := b.pool.cfg.HealthCheck.Timeout
	conn, err := b.dialOwn(ctx, timeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := redisHandshake(b, conn, timeout, redis.RESP2); err != nil {
		return err
	}
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	if _, err := conn.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	reply, _, err := redis.NewReplyReader(conn, redis.ReplyLimits{MaxReply: 64 << 10}).Read(nil, nil)
	switch {
	case err != nil:
		return err
	case loading(reply):
		return errLoadingReply
	case !bytes.Equal(reply, []byte("+PONG\r\n")):
		return fmt.Errorf("%w: %q to PING", redis.ErrBadReply, reply)
	}
	return nil
}
