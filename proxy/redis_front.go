package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// redisReplies reads a Redis server's replies.
type redisReplies struct {
	rr *redis.ReplyReader
}

func newRedisReplies(r io.Reader, cfg *PoolConfig) *redisReplies {
	return &redisReplies{rr: redis.NewReplyReader(r, redis.ReplyLimits{MaxBulk: cfg.MaxValueSize})}
}

func (r *redisReplies) Wait() error     { return r.rr.Wait() }
func (r *redisReplies) Buffered() int   { return r.rr.Buffered() }
func (r *redisReplies) badReply() error { return redis.ErrBadReply }

// errLoadingReply is the error of a -LOADING reply: one value, so that a
// loading server's replies allocate nothing.
var errLoadingReply = fmt.Errorf("%w (it answers -LOADING)", ErrServerLoading)

func (r *redisReplies) read(o *op) (err error) {
	r.rr.Budget = o
	o.reply, o.elems, err = r.rr.Read(o.reply[:0], o.elems[:0])
	if err == nil && loading(o.reply) {
		return errLoadingReply
	}
	return err
}

// loading reports whether a reply is redis-server's answer while it loads
// its data set at start ("-LOADING Redis is loading the dataset in
// memory").
func loading(reply []byte) bool {
	return len(reply) > 8 && reply[0] == '-' && string(reply[1:8]) == "LOADING"
}

// handshakeRequest returns what the proxy sends on a new connection to a
// Redis server before any request: AUTH with the server's password and
// SELECT of redis_db, as nutcracker sends them; nil for none, and for a
// memcached server.
func (b *backend) handshakeRequest() [][]byte {
	cfg := b.pool.cfg
	if !cfg.Redis {
		return nil
	}
	var reqs [][]byte
	if pw := cfg.serverPassword(b.spec); pw != "" {
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
func (b *backend) handshake(conn net.Conn, timeout time.Duration) error {
	reqs := b.handshakeRequest()
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

// probeRedis checks a Redis server on a fresh connection: the handshake,
// then PING, which a server loading its data answers with -LOADING.
func (b *backend) probeRedis(ctx context.Context, timeout time.Duration) error {
	d := net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(ctx, network(b.addr), b.addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := b.handshake(conn, timeout); err != nil {
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
