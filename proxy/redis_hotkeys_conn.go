package proxy

// The connections of a Redis pool's hot-key trackers (see
// redis_hotkeys.go): their setup, their readers, and what a failed one
// leaves.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// run keeps the server tracked until ctx ends: it connects, serves the
// connections until one fails, and connects again a second later,
// logging a loss once rather than each try; a server that refuses
// tracking is left untracked.
func (t *redisTracker) run(ctx context.Context) {
	log := t.b.pool.log
	say := true // the next failure is logged
	for ctx.Err() == nil {
		err := t.connect(ctx)
		var refused *trackingRefused
		switch {
		case errors.As(err, &refused):
			log.Warn("hot keys: the server refuses CLIENT TRACKING, so its keys are not cached", "server", t.b.name(), "reply", refused.reply)
			return
		case err == nil:
			say = true
			err = t.serve(ctx)
		}
		t.fail(err)
		if ctx.Err() == nil && say {
			say = false
			log.Info("hot keys: the server's tracking connection failed: its keys are not cached until it is back", "server", t.b.name(), "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// trackingRefused is the error of a server that refuses tracking.
type trackingRefused struct{ reply string }

func (e *trackingRefused) Error() string { return "CLIENT TRACKING refused: " + e.reply }

// connect opens the subscriber and the tracked reader.
func (t *redisTracker) connect(ctx context.Context) error {
	sub, err := redisDial(ctx, t.b, redis.RESP2)
	if err != nil {
		return err
	}
	data, err := redisDial(ctx, t.b, redis.RESP2)
	if err != nil {
		sub.Close()
		return err
	}
	ok := false
	defer func() {
		if !ok {
			sub.Close()
			data.Close()
		}
	}()
	id, err := trackerAsk(sub, t.b, redisCommand("CLIENT", "ID"))
	if err != nil {
		return err
	}
	if redis.IsError(id) {
		return &trackingRefused{string(bytes.TrimSpace(id))}
	}
	n, isInt := redis.Integer(id)
	if !isInt {
		return fmt.Errorf("%w: CLIENT ID: %q", redis.ErrBadReply, id)
	}
	if reply, err := trackerAsk(sub, t.b, redisCommand("SUBSCRIBE", "__redis__:invalidate")); err != nil {
		return err
	} else if redis.IsError(reply) {
		return fmt.Errorf("SUBSCRIBE: %q", reply)
	}
	reply, err := trackerAsk(data, t.b, redisCommand("CLIENT", "TRACKING", "ON", "REDIRECT", fmt.Sprint(n)))
	if err != nil {
		return err
	}
	if !bytes.Equal(reply, []byte("+OK\r\n")) {
		return &trackingRefused{string(bytes.TrimSpace(reply))}
	}
	_ = sub.SetDeadline(time.Time{})
	_ = data.SetDeadline(time.Time{})
	t.mu.Lock()
	t.sub, t.data, t.ready = sub, data, true
	t.mu.Unlock()
	ok = true
	return nil
}

// trackerAsk sends req on conn and reads its reply, an error reply
// included, within the pool's timeout. Nothing else is to come on conn
// meanwhile: the reader it reads with is dropped.
func trackerAsk(conn net.Conn, b *backend, req []byte) ([]byte, error) {
	if err := conn.SetDeadline(time.Now().Add(b.pool.cfg.Timeout)); err != nil {
		return nil, err
	}
	if _, err := conn.Write(req); err != nil {
		return nil, err
	}
	reply, _, err := redis.NewReplyReader(conn, redis.ReplyLimits{MaxReply: 64 << 10}).Read(nil, nil)
	return reply, err
}

// redisCommand encodes a command of args.
func redisCommand(args ...string) []byte {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	return redis.AppendArgs(nil, b)
}

// serve reads both connections until one fails or ctx ends.
func (t *redisTracker) serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		t.sub.Close()
		t.data.Close()
	})
	defer stop()
	errs := make(chan error, 2)
	go func() { errs <- t.readData() }()
	err := t.readSub()
	t.data.Close()
	t.sub.Close()
	<-errs
	return err
}

// readSub reads the subscriber's stream: invalidations, and the replies
// to the PINGs.
func (t *redisTracker) readSub() error {
	rr := redis.NewReplyReader(t.sub, redis.ReplyLimits{})
	var reply []byte
	var elems []redis.Span
	for {
		var err error
		if reply, elems, err = rr.Read(reply[:0], elems[:0]); err != nil {
			return err
		}
		switch {
		case len(elems) == 2 && bytes.Equal(reply[elems[0].Start:elems[0].End], []byte("$4\r\npong\r\n")):
			t.pong()
		case len(elems) == 3 && bytes.Equal(reply[elems[0].Start:elems[0].End], []byte("$7\r\nmessage\r\n")):
			if err := t.invalidated(reply[elems[2].Start:elems[2].End]); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%w on the invalidation channel: %q", redis.ErrBadReply, reply)
		}
	}
}

// invalidated drops the values of the keys of an invalidation message, an
// array of keys, or of every key for a null (a flush).
func (t *redisTracker) invalidated(keys []byte) error {
	if bytes.HasPrefix(keys, []byte("*-1")) || bytes.HasPrefix(keys, []byte("$-1")) {
		t.c.invalidateAll()
		return nil
	}
	rr := redis.NewReplyReader(bytes.NewReader(keys), redis.ReplyLimits{})
	all, elems, err := rr.Read(nil, nil)
	if err != nil {
		return err
	}
	for _, e := range elems {
		key, isNil, ok := redis.Bulk(all[e.Start:e.End])
		if !ok || isNil {
			return fmt.Errorf("%w: an invalidation of %q", redis.ErrBadReply, all[e.Start:e.End])
		}
		t.c.invalidate(key)
	}
	return nil
}

// readData reads the replies to the GETs.
func (t *redisTracker) readData() error {
	rr := redis.NewReplyReader(t.data, redis.ReplyLimits{MaxReply: t.b.pool.cfg.MaxValueSize + 64})
	var reply []byte
	for {
		var err error
		if reply, _, err = rr.Read(reply[:0], nil); err != nil {
			return err
		}
		t.filledReply(reply)
	}
}

// fail stops tracking after err: every value is dropped, the reads
// waiting are answered with the error, and the connections closed.
func (t *redisTracker) fail(err error) {
	t.c.invalidateAll()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ready, t.pingOut, t.laterSet = false, false, false
	t.later.Stop()
	if t.sub != nil {
		t.sub.Close()
		t.data.Close()
	}
	reply := redis.AppendError(nil, "ERR the proxy lost its connection to the server: "+fmt.Sprint(err))
	for _, list := range [][]redisWaiter{t.waiting, t.pinged, t.filled} {
		for _, w := range list {
			answerRedisHot(w.r, reply)
		}
	}
	t.waiting, t.pinged, t.filled, t.fills = nil, nil, nil, nil
	t.got = t.sent
}
