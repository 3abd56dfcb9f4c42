package proxy

import (
	"context"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/kolco-dev/kolco/proxy/internal/mover"
	"github.com/kolco-dev/kolco/proxy/redis"
)

// A Redis store's mover (see storeMover.run): it lists an old server's
// keys with SCAN and moves those that changed owner with MIGRATE ...
// KEYS, in batches, with proxy/internal/mover, asking the server's
// moveJob where each key goes and when a batch may go.

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
	plan := &redisMovePlan{job: job, cfg: cfg, src: src, dsts: map[string]*backend{}}
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
	src *backend
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

func (r *redisMovePlan) Migrate(dst string) ([][]byte, error) {
	args, err := migrateArgs(r.cfg, r.dst(dst))
	if err != nil {
		return nil, err
	}
	return timeoutAtMost(args, int64(r.job.mv.migrateTimeout(r.src, r.cfg.Store.MigrateTimeout))), nil
}

// migrateTimeout returns the timeout, in milliseconds, of a MIGRATE from
// src: configured (migrate_timeout), but for a pool on Sentinels at most
// a third of the time they let src's primary be silent, shared among the
// moveConns MIGRATEs this proxy may have queued on src. A MIGRATE blocks
// its source until the target answers, and a target in a MIGRATE of its
// own to the source - another proxy's mover, crossing this one's -
// answers nothing until one of them times out: with migrate_timeout's
// 5 s and Sentinels that fail a primary over after 3 s, the fault
// schedule's seed 3536 saw both healthy primaries of a crossing failed
// over, and the writes each acknowledged until the proxies learnt of it
// lost when it became a replica. A third of down-after-milliseconds for
// one MIGRATE was not enough: the Sentinels' PING waits behind every
// MIGRATE queued on the server, and crossings of two proxies' movers
// (TestStoreCrossingMoversKeepTheirPrimaries, 1.5 s) held a server in
// MIGRATEs of 0.5-0.8 s back to back until it was failed over. Logged
// once per master and value.
func (mv *storeMover) migrateTimeout(src *backend, configured int) int {
	if mv.downAfter == nil {
		return configured
	}
	d := mv.downAfter(src.node.ID)
	limit := max(int(d.Milliseconds()/(3*moveConns)), 1)
	if d <= 0 || configured <= limit {
		return configured
	}
	if prev, ok := mv.lowered.Load(src.node.ID); ok && prev.(int) == limit {
		return limit // a request's MIGRATE: no write to the map, no boxed int
	}
	if prev, logged := mv.lowered.Swap(src.node.ID, limit); !logged || prev.(int) != limit {
		mv.log.Info("store move: MIGRATE's timeout lowered below the Sentinels' down-after-milliseconds, so that MIGRATEs waiting on their target never have them fail their source over",
			"master", src.node.ID, "migrate_timeout_ms", configured, "timeout_ms", limit, "down_after_ms", d.Milliseconds())
	}
	return limit
}

func (r *redisMovePlan) Big(ctx context.Context, dst string, key []byte) error {
	return r.job.bigKey(ctx, key, copyBig(r.dst(dst), key))
}

func (r *redisMovePlan) Admits(worker int) (bool, <-chan struct{}) { return r.job.admits(worker) }

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
