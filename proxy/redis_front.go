package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// redisFront is the Redis protocol's front: RESP2 from clients, commands
// routed by their keys (see redis.Splitter), as twemproxy's
// proto/nc_redis.c does for its core.
type redisFront struct{}

// rejoin does nothing: a Redis server is never emptied, since its data
// may be all there is of it.
func (redisFront) rejoin(context.Context, *backend) error { return nil }

// errNotEmptied is empty's error: nothing empties a Redis server.
var errNotEmptied = errors.New("a Redis server is never emptied: its data may be all there is of it")

func (redisFront) empty(context.Context, *backend) error { return errNotEmptied }

// sweep has nothing to do: a Redis pool is not swept (see checkRedis).
func (redisFront) sweep(p *pool, m *migration) { p.settle(m) }

func (redisFront) errorReply(err error) []byte { return appendRedisError(nil, err) }

func (redisFront) commands() int { return redis.NumCommands() }

func (redisFront) commandName(i int) string { return redis.CommandByID(i).Name() }

// handshakeRequest returns what the proxy sends on a new connection to a
// Redis server before any request: AUTH with the server's password and
// SELECT of redis_db, as nutcracker sends them; nil for none.
func handshakeRequest(b *backend) [][]byte {
	cfg := b.pool.cfg
	var reqs [][]byte
	if pw := cfg.serverPassword(b.node); pw != "" {
		reqs = append(reqs, redis.AppendArgs(nil, [][]byte{[]byte("AUTH"), []byte(pw)}))
	}
	if cfg.RedisDB > 0 {
		reqs = append(reqs, redis.AppendArgs(nil, [][]byte{[]byte("SELECT"), fmt.Append(nil, cfg.RedisDB)}))
	}
	return reqs
}

// handshake sends the handshake requests on a new connection and checks
// their replies, within timeout. A server that refuses one fails the
// connect with [ErrRedisHandshake], where nutcracker ignores the refusal
// and lets the requests fail one by one, or reach database 0; an AUTH
// refused because the server has no password is no failure, as it is
// none to nutcracker, whose redis_auth also sets the clients' password.
func (redisFront) handshake(b *backend, conn net.Conn) error {
	return redisHandshake(b, conn, b.pool.cfg.Timeout)
}

// redisHandshake is the handshake on conn, within timeout.
func redisHandshake(b *backend, conn net.Conn, timeout time.Duration) error {
	reqs := handshakeRequest(b)
	if len(reqs) == 0 {
		return nil
	}
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	if _, err := conn.Write(bytes.Join(reqs, nil)); err != nil {
		return serverError(b.addr, "handshake", err)
	}
	rr := redis.NewReplyReader(conn, redis.ReplyLimits{MaxReply: 64 << 10})
	for _, req := range reqs {
		reply, _, err := rr.Read(nil, nil)
		if err != nil {
			return serverError(b.addr, "handshake", err)
		}
		if bytes.Equal(reply, []byte("+OK\r\n")) || noPassword(reply) {
			continue
		}
		cmd := "AUTH"
		if bytes.HasPrefix(req, []byte("*2\r\n$6\r\nSELECT")) {
			cmd = fmt.Sprintf("SELECT %d", b.pool.cfg.RedisDB)
		}
		return &ServerError{Addr: b.addr, Err: fmt.Errorf("%w: %s: %s", ErrRedisHandshake, cmd, bytes.TrimSpace(reply[1:]))}
	}
	return conn.SetDeadline(time.Time{})
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
	if err := redisHandshake(b, conn, timeout); err != nil {
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
