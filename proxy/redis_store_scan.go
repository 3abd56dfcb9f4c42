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
