package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/kolco-dev/kolco/proxy/internal/mover"
	"github.com/kolco-dev/kolco/proxy/redis"
)

// A Redis store's moves (see storeMove): the request's side, which moves
// a request's keys before the request goes to their servers, and the
// mover's, which lists a server's keys and moves them in batches.

// moveKeys moves each key of r that may not be on its server yet there
// from the servers it had under the move's placements, one MIGRATE each,
// and returns when they are done: then r goes to the keys' servers as
// ever. A key moves whether it is read or written, and keys sharing a
// hash tag are on one server under every placement, so a multi-key
// command finds them all. While the move is not open r waits, up to the
// pool's timeout, with the client's earlier requests answered first: the
// move opens once the pool this one replaced has answered its requests in
// flight, and a pipelining client's earlier requests may be in that pool,
// waiting to be answered with the round r is read in. The error is what r
// is answered with.
func (c *redisClient) moveKeys(p *pool, r *redisRequest, m keyMove) error {
	read := r.req.Cmd.ReadOnly() && r.req.NumKeys() == 1 // may read a big key where it is
	moved, err := c.moveEach(p, m, r.start.Add(p.cfg.Timeout), r.req.NumKeys(), r.req.Key, read)
	r.moved = r.moved || moved
	return err
}

// moveEach is moveKeys for the n keys key gives, by deadline. It reports
// whether a key may have had to move (it had another server under one of
// the move's placements). A big key it copies in pieces (see keyCopies),
// and waits for, unless read says the request only reads its one key:
// that goes to the key's old server while the copy runs (c.fromSource).
func (c *redisClient) moveEach(p *pool, km keyMove, deadline time.Time, n int, key func(int) []byte, read bool) (moved bool, err error) {
	m, mv := km.(*storeMove), p.mover.(*storeMover)
	var sc routeScratch
	var from []*backend
	for i := range n {
		key := key(i)
		owners := c.place.route(key, false, &sc)
		if len(owners) == 0 {
			continue
		}
		to := owners[0]
		if from = m.sources(from[:0], key, to, &sc); len(from) == 0 {
			continue
		}
		moved = true
		if !m.isOpen() {
			if !c.endRound() {
				return moved, errClientGone
			}
			if err := m.wait(deadline); err != nil {
				return moved, err
			}
		}
		for _, src := range from {
			moved, big, err := migrateOne(mv.roles, src, to, key, deadline)
			if !big && err == nil {
				m.tookOff(src.addr, key)
			}
			if big && err == nil {
				kc := mv.copyKey(key, src, copyBig(to, key))
				if !c.endRound() { // the earlier requests' replies do not wait for it
					return moved, errClientGone
				}
				var reading bool
				if reading, err = kc.await(context.Background(), deadline, read); reading {
					c.fromSource = kc
					return true, nil
				}
				moved = false // counted by the mover, when it copied it
			}
			if err != nil {
				m.stats.failed.Add(1)
				line := fmt.Sprintf("%s -> %s: %v", src.addr, to.addr, err)
				m.stats.lastErr.Store(&line)
				return moved, fmt.Errorf("%w: moving the key from %s to %s: %w", errMoveFailed, src.addr, to.addr, err)
			}
			if moved {
				m.stats.onRequest.Add(1)
				m.stats.source(src.addr).onRequest.Add(1)
				p.stats.storeMoved.Add(1)
			}
		}
	}
	return moved, nil
}

// tryAgainCause returns what a client reads after TRYAGAIN for a request
// whose keys could not move: the proxy's words, without the servers'
// addresses and the server's error, which the log and the move's figures
// (last_error) give.
func tryAgainCause(err error) string {
	if errors.Is(err, errMoveFailed) {
		return errMoveFailed.Error()
	}
	return withoutPrefix(err)
}

// errMoveFailed is the error of a request whose key could not be moved to
// its new server: it is still on its old one, which is the only one a read
// finds, and the client may try again.
var errMoveFailed = errors.New("the key could not move to its new server")

// migrateOne moves key from src to dst, on src's connection of the key, so
// that the key's requests reach src in order. It reports whether src held
// the key, and whether it is big (see keyCopies): then it is still on src,
// for the caller to copy.
func migrateOne(roles *migrateRoles, src, dst *backend, key []byte, deadline time.Time) (moved, big bool, err error) {
	args, err := migrateArgs(src.pool.cfg, dst)
	if err != nil {
		return false, false, err
	}
	st := src.pool.cfg.Store
	req := mover.AppendMigrate(nil, args, [][]byte{key}, int64(st.BigKeyElements), int64(st.BigKeyBytes))
	if err := roles.acquire(context.Background(), deadline, src.addr, dst.addr); err != nil {
		return false, false, err
	}
	defer roles.release(src.addr, dst.addr)
	done := make(chan struct{})
	ro := newRedisOp(func(*op) { close(done) })
	ro.buf, ro.deadline = req, deadline
	src.sendKeyed(&ro.op, keyHash(key))
	<-done
	if ro.err != nil {
		return false, false, ro.err
	}
	n, bigKeys, err := mover.ParseMigrate(ro.reply, 1)
	return n > 0, len(bigKeys) > 0, err
}

// migrateArgs returns the arguments, up to KEYS, of the MIGRATE that
// moves keys to dst, with their time to live, replacing a copy dst may
// hold (one left by a MIGRATE whose reply was lost: the key on src is the
// one a read finds), giving dst's password when the pool has one for it.
func migrateArgs(cfg *PoolConfig, dst *backend) ([][]byte, error) {
	host, port, err := net.SplitHostPort(dst.addr)
	if err != nil {
		return nil, fmt.Errorf("MIGRATE needs a TCP address; %s is not one", dst.addr)
	}
	args := [][]byte{[]byte("MIGRATE"), []byte(host), []byte(port), nil, []byte(strconv.Itoa(cfg.RedisDB)),
		[]byte(strconv.Itoa(cfg.Store.MigrateTimeout)), []byte("REPLACE")}
	switch auth := cfg.serverAuth(dst.node); len(auth) {
	case 1:
		args = append(args, []byte("AUTH"), []byte(auth[0]))
	case 2:
		args = append(args, []byte("AUTH2"), []byte(auth[0]), []byte(auth[1]))
	}
	return args, nil
}

// scan lists keys of b with SCAN.
func (redisFront) scan(ctx context.Context, b *backend, cursor string, count int) ([]string, string, error) {
	replies, err := redisAsk(ctx, b, redis.AppendArgs(nil, [][]byte{[]byte("SCAN"), []byte(cursor), []byte("COUNT"), []byte(strconv.Itoa(count))}), 1)
	if err != nil {
		return nil, "", err
	}
	next, keys, err := redis.ParseScan(replies[0])
	if err != nil {
		return nil, "", err
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = string(k)
	}
	return out, string(next), nil
}

// moveFrom moves every key src holds that job.dest sends elsewhere, each
// with its time to live, as one step per key on src, with
// proxy/internal/mover: SCAN on a connection of its own, MIGRATE ...
// REPLACE KEYS on a few more, each connection dialed once for the move.
// It waits on job before each batch and tells it what moved; it returns
// nil once it has been through src, and an error only when ctx ends or
// job stops it.
func (redisFront) moveFrom(ctx context.Context, src *backend, job *moveJob) error {
	cfg := src.pool.cfg
	plan := &redisMovePlan{job: job, cfg: cfg, dsts: map[string]*backend{}}
	return mover.Run(ctx, func(ctx context.Context) (net.Conn, error) { return redisDial(ctx, src, redis.RESP2) }, plan, mover.Config{
		Conns: moveConns, Slice: job.slice(), MaxBatch: job.maxBatch(), Timeout: cfg.Timeout,
		MigrateTimeout: cfg.Timeout + 10*time.Duration(cfg.Store.MigrateTimeout)*time.Millisecond, MaxReply: cfg.MaxValueSize,
		BigElements: int64(cfg.Store.BigKeyElements), BigBytes: int64(cfg.Store.BigKeyBytes),
	})
}

// redisMovePlan is a moveJob as the mover asks it, by the servers'
// addresses.
type redisMovePlan struct {
	job *moveJob
	cfg *PoolConfig
	// mu guards dsts, the servers Dest named, by address.
	mu   sync.Mutex
	dsts map[string]*backend
}

func (r *redisMovePlan) Dest(key []byte) string {
	if mover.Reserved(key) {
		return "" // a copy's own, on its server (see mover.Copy)
	}
	b := r.job.dest(key)
	if b == nil {
		return ""
	}
	r.mu.Lock()
	r.dsts[b.addr] = b
	r.mu.Unlock()
	return b.addr
}

func (r *redisMovePlan) dst(addr string) *backend {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dsts[addr]
}

func (r *redisMovePlan) Migrate(dst string) ([][]byte, error) { return migrateArgs(r.cfg, r.dst(dst)) }

func (r *redisMovePlan) Big(ctx context.Context, dst string, key []byte) error {
	return r.job.bigKey(ctx, key, copyBig(r.dst(dst), key))
}

func (r *redisMovePlan) Admits(worker int) bool { return r.job.admits(worker) }

func (r *redisMovePlan) Wait(ctx context.Context, _ int) error { return r.job.wait(ctx) }

func (r *redisMovePlan) Hold(ctx context.Context, dst string) (func(), error) {
	return r.job.hold(ctx, r.dst(dst))
}

func (r *redisMovePlan) Scanned(n int) { r.job.scanned(n) }

func (r *redisMovePlan) Moved(dst string, keys [][]byte, bytes int64, took time.Duration) {
	r.job.moved(r.dst(dst), keys, bytes, took)
}

func (r *redisMovePlan) Failed(dst string, err error) {
	var b *backend
	if dst != "" {
		b = r.dst(dst)
	}
	r.job.failed(b, err)
}
