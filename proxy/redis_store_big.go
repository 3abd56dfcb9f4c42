package proxy

import (
	"bytes"
	"context"
	"errors"
	"net"
	"time"

	"github.com/kolco-dev/kolco/proxy/internal/mover"
	"github.com/kolco-dev/kolco/proxy/redis"
)

// A Redis store's big keys (see keyCopies): over store.big_key_elements
// or big_key_bytes, a key moves with proxy/internal/mover's Copy - read
// in pieces from its old server, written into a temporary key on its new
// one, renamed there, deleted from the old - not with one MIGRATE, which
// would hold its server until the new one had it whole. The MIGRATE of a
// request or of the mover sizes the key in the same script, so a key
// under the bounds moves as ever.
//
// A write of the key, as any request for a key that may be on its old
// server, waits until the key is moved: until the copy ends, by the
// pool's timeout (then -TRYAGAIN, and nothing written). A read of the
// key alone goes to the old server while the copy holds the key's lock
// there: no one else deletes the old server's copy meanwhile, and no
// write changes it. The copy deletes it on the connection of the key
// that those reads went on, after them, once it stopped sending reads
// there, so that no read reaches the old server after the key left it.

// errBigKeyMoving is the error of a request for a big key that moves
// piece by piece past the request's deadline.
var errBigKeyMoving = errors.New("the key is big and moves to its new server piece by piece: its writes wait for it")

// bigRead is a read of a big key from its old server while a copy holds
// the key there (see moveBig): the copy, and the hash of the key's
// connection there.
type bigRead struct {
	kc   *keyCopy
	hash uint64
}

// moveBig waits for kc, the copy of key, by deadline; but when read is
// set (the request reads only the key), it returns there once the old
// server holds the key for the copy, with read filled in and the copy's
// reads held: the caller sends the request with read.send, or lets go
// with read.release.
func moveBig(kc *keyCopy, key []byte, deadline time.Time, read *bigRead) (there bool, err error) {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	for {
		var changed <-chan struct{}
		if read != nil {
			var ok bool
			if ok, changed = kc.readSource(); ok {
				read.kc, read.hash = kc, keyHash(key)
				return true, nil
			}
		}
		select {
		case <-kc.done:
			return false, kc.err
		case <-changed:
		case <-t.C:
			return false, errBigKeyMoving
		}
	}
}

// send sends r's one op to the key's old server on the key's connection,
// and lets the copy go on.
func (b *bigRead) send(r *redisRequest) {
	kc := b.kc
	b.kc = nil
	kc.src.sendKeyed(r.ops[0], b.hash)
	kc.mu.RUnlock()
}

// release lets the copy go on, when the request was answered before it
// was sent.
func (b *bigRead) release() {
	if kc := b.kc; kc != nil {
		b.kc = nil
		kc.mu.RUnlock()
	}
}

// copyBig returns the run of a copy of key to dst.
func copyBig(dst *backend, key []byte) func(ctx context.Context, kc *keyCopy) error {
	key = bytes.Clone(key)
	return func(ctx context.Context, kc *keyCopy) error {
		src := kc.src
		cfg := src.pool.cfg
		start := time.Now()
		c := &mover.Copy{
			Src:     func(ctx context.Context) (net.Conn, error) { return redisDial(ctx, src, redis.RESP2) },
			Dst:     func(ctx context.Context) (net.Conn, error) { return redisDial(ctx, dst, redis.RESP2) },
			Key:     key,
			Timeout: cfg.Timeout,
			Holding: kc.setFromSource,
			DelSource: func(context.Context) error {
				kc.setFromSource(false) // after the reads sent to src
				return delKeyed(src, key, time.Now().Add(cfg.Timeout))
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

// delKeyed deletes key from b on b's connection of the key, with UNLINK
// (see mover.Copy).
func delKeyed(b *backend, key []byte, deadline time.Time) error {
	done := make(chan struct{})
	ro := newRedisOp(func(*op) { close(done) })
	ro.buf, ro.deadline = redis.AppendArgs(nil, [][]byte{[]byte("UNLINK"), key}), deadline
	b.sendKeyed(&ro.op, keyHash(key))
	<-done
	if ro.err != nil {
		return ro.err
	}
	if _, ok := redis.Integer(ro.reply); !ok {
		return &mover.ServerError{Command: "UNLINK", Reply: string(bytes.TrimSpace(ro.reply))}
	}
	return nil
}
