package proxy

import (
	"bytes"
	"context"
	"net"
	"time"

	"github.com/kolco-dev/kolco/proxy/internal/mover"
	"github.com/kolco-dev/kolco/proxy/redis"
)

// A Redis store's big keys (see keyCopies): over store.big_key_elements
// or big_key_bytes, a key moves with proxy/internal/mover's Copy - read
// in pieces from its old server, written into a temporary key on its new
// one, renamed there, deleted from the old - not with one MIGRATE, which
// would hold its server until the new one had it whole. A request's
// MIGRATE sizes its key in the same script, and the mover's sizes each
// key that may be big so (see proxy/internal/mover), so a key under the
// bounds moves as ever.
//
// A write of the key, as any request for a key that may be on its old
// server, waits until the key is moved: until the copy ends, by the
// pool's timeout (then -TRYAGAIN, and nothing written). A read of the
// key alone goes to the old server while the copy holds the key's lock
// there: no one else deletes the old server's copy meanwhile, and no
// write changes it. The copy stops sending reads there, waits until the
// old server has answered every read sent to it, and only then deletes
// it, so that no read reaches the old server after the key left it:
// waits, since a read goes on a connection of its client's protocol (a
// RESP3 client's on one of the RESP3 ones) that the delete does not
// share, and the server may run what one connection sends before what
// another sent earlier.

// bigKeyLease is how long a big key's copy holds its lock on the new
// server without renewing it; the copy waits for the reads it let through
// to its old server for at most half of it (see keyCopy.awaitReads), so
// that its delete there is sent while the lock, renewed as the copy
// finished, still keeps every other copier of the key away: one that took
// the lock after it lapsed would copy the key while this delete emptied
// its source, and finish with a part of it.
const bigKeyLease = 3 * time.Second

// copyBig returns the run of a copy of key to dst (see storeMover.copyKey).
func copyBig(dst *backend, key []byte) func(ctx context.Context, src *backend, holding func(bool), del func(*op)) error {
	key = bytes.Clone(key)
	return func(ctx context.Context, src *backend, holding func(bool), del func(*op)) error {
		cfg := src.pool.cfg
		start := time.Now()
		c := &mover.Copy{
			Src:     func(ctx context.Context) (net.Conn, error) { return redisDial(ctx, src, redis.RESP2) },
			Dst:     func(ctx context.Context) (net.Conn, error) { return redisDial(ctx, dst, redis.RESP2) },
			Key:     key,
			Timeout: cfg.Timeout,
			Lease:   bigKeyLease,
			Holding: holding,
			DelSource: func(context.Context) error {
				return unlinkOn(del, key, time.Now().Add(cfg.Timeout))
			},
		}
		moved, err := c.Run(ctx)
		log := src.pool.log.With("from", src.addr, "to", dst.addr, "took", time.Since(start).Round(time.Millisecond))
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("store move: a big key's copy failed; the key stays on its old server, and is copied again", "error", err)
		case moved:
			log.Info("store move: a big key copied to its new server piece by piece")
		}
		return err
	}
}

// unlinkOn deletes key with UNLINK (see mover.Copy), sent by send.
func unlinkOn(send func(*op), key []byte, deadline time.Time) error {
	done := make(chan struct{})
	ro := newRedisOp(func(*op) { close(done) })
	ro.buf, ro.deadline = redis.AppendArgs(nil, [][]byte{[]byte("UNLINK"), key}), deadline
	send(&ro.op)
	<-done
	if ro.err != nil {
		return ro.err
	}
	if _, ok := redis.Integer(ro.reply); !ok {
		return &mover.ServerError{Command: "UNLINK", Reply: string(bytes.TrimSpace(ro.reply))}
	}
	return nil
}
