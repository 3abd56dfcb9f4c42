// Package mover moves the keys a Redis server holds to other servers at
// the speed the servers allow: SCAN on a connection of its own, running
// ahead of the moves; MIGRATE ... REPLACE KEYS on a few pooled
// connections at once, each batch sized from what the last ones took;
// the keys' sizes asked of a sample (MEMORY USAGE), pipelined with the
// SCANs. It knows Redis and nothing of the proxy: which keys move and
// where, how fast, and which MIGRATEs may run at once are its caller's,
// asked through a [Plan].
//
// Why it is shaped so. A MIGRATE holds its source for the time the source
// takes to serialize its keys and hear the target's reply; the source
// serves nothing else meanwhile. One MIGRATE at a time on one connection
// leaves the source idle for a round trip between two, and a connection
// dialed per MIGRATE adds a handshake; several MIGRATEs pipelined on one
// connection run back to back, and a client's request waits for all of
// them. So each MIGRATE has a connection of its own, and the caller's
// window says how many run at once: the source interleaves them with its
// clients' requests, one command per connection in each turn of its event
// loop. A batch is sized so that one MIGRATE holds its source for about
// [Config.Slice]: large enough that the round trip and the command's own
// cost are spread over many keys, short enough that a client's request
// waits little.
package mover

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ErrStopped is returned by Run when the plan stopped the move.
var ErrStopped = errors.New("mover: stopped")

// Plan is what the caller decides for one source's move. Its methods are
// called from several goroutines at once, except Dest, which only the
// scanning goroutine calls.
type Plan interface {
	// Dest returns the server key goes to, "" when it stays.
	Dest(key []byte) string
	// Migrate returns the arguments of the MIGRATE that moves keys to
	// dst, up to KEYS and without it.
	Migrate(dst string) ([][]byte, error)
	// Big moves key, over the bounds of Config.BigElements and BigBytes,
	// to dst piece by piece (see Copy), while the worker waits.
	Big(ctx context.Context, dst string, key []byte) error
	// Admits reports whether worker (0 to Config.Conns-1) may take a
	// batch now: the caller's window of MIGRATEs at once; when it does
	// not, it returns a channel closed once the answer may change. It must
	// admit worker 0 always; another waits on the channel and asks again,
	// until it is admitted or the listing ends.
	Admits(worker int) (bool, <-chan struct{})
	// Wait blocks until a worker may send its next MIGRATE: the caller's
	// pause, its rest, its ceiling of keys a second over the keys Moved
	// reported. An error stops the move.
	Wait(ctx context.Context, worker int) error
	// Hold waits until a MIGRATE from the source to dst may run, and
	// returns what ends its hold.
	Hold(ctx context.Context, dst string) (release func(), err error)
	// Scanned reports n keys listed; Moved a MIGRATE to dst, of about
	// bytes, that took took and left keys off the source (moved, or not
	// there; keys and their bytes are valid only during the call);
	// Failed a SCAN or MIGRATE that failed (dst "" for a SCAN), tried
	// again after a backoff.
	Scanned(n int)
	Moved(dst string, keys [][]byte, bytes int64, took time.Duration)
	Failed(dst string, err error)
}

// Config sets a run. Zero values mean the documented defaults.
type Config struct {
	// Conns is how many MIGRATEs may run at once from the source, each
	// on a connection of its own. Default 4: past the source's one core,
	// more only queue.
	Conns int
	// Slice is about how long one MIGRATE holds its source. Default 1 ms.
	Slice time.Duration
	// MinBatch and MaxBatch bound a batch. Defaults 8 and 1000.
	MinBatch, MaxBatch int
	// Sample: one key in Sample has its size asked. Default 16.
	Sample int
	// Timeout bounds a SCAN's reply; MigrateTimeout a MIGRATE's.
	// Defaults 5 s and 60 s.
	Timeout, MigrateTimeout time.Duration
	// MaxReply bounds a reply's bulk strings. Default 512 MiB.
	MaxReply int
	// Backoff bounds the first wait after a failure, doubling to 5 s;
	// each wait is drawn at random below its bound (see backoff).
	// Default 100 ms.
	Backoff time.Duration
	// BigElements and BigBytes bound the keys MIGRATE moves: a
	// collection of more elements, or more bytes, or a string of more
	// bytes, goes to Plan.Big instead (see big.go). Default 0: every key
	// goes with MIGRATE.
	BigElements, BigBytes int64
}

// suspect is the MEMORY USAGE over which a key may be big: BigBytes, or
// 16 bytes an element for BigElements.
func (c Config) suspect() int64 {
	if c.BigBytes > 0 {
		return min(c.BigBytes, 16*c.BigElements)
	}
	return 16 * c.BigElements
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.Conns, 4)
	def(&c.MinBatch, 8)
	def(&c.MaxBatch, 1000)
	def(&c.Sample, 16)
	def(&c.MaxReply, 512<<20)
	c.MinBatch = min(c.MinBatch, c.MaxBatch)
	for _, d := range []struct {
		v *time.Duration
		d time.Duration
	}{{&c.Slice, time.Millisecond}, {&c.Timeout, 5 * time.Second}, {&c.MigrateTimeout, time.Minute}, {&c.Backoff, 100 * time.Millisecond}} {
		if *d.v <= 0 {
			*d.v = d.d
		}
	}
	return c
}

// Dialer opens a connection to the source, ready for commands (AUTH and
// SELECT done).
type Dialer func(ctx context.Context) (net.Conn, error)

// batch is keys going to one server; probe says that its MIGRATE sizes
// them first, and leaves the big ones to Plan.Big (see big.go).
type batch struct {
	dst   string
	keys  [][]byte
	probe bool
}

// Run moves every key the source holds that plan.Dest sends elsewhere,
// and returns nil once it has been through the source and every MIGRATE
// succeeded. A failed SCAN or MIGRATE is reported and tried again; Run
// returns early only with ctx's error, or ErrStopped when plan.Wait or
// plan.Hold fails.
func Run(ctx context.Context, dial Dialer, plan Plan, cfg Config) error {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r := &run{cfg: cfg, dial: dial, plan: plan, sizer: newSizer(cfg)}
	work := make(chan batch, cfg.Conns)
	r.listed = make(chan struct{})
	var wg sync.WaitGroup
	for w := range cfg.Conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.migrateAll(ctx, w, work); err != nil {
				cancel(err)
			}
		}()
	}
	err := r.scan(ctx, work)
	close(work)
	close(r.listed)
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil {
		return cause // a worker stopped the move, or ctx ended
	}
	return err
}

// run is one source's move.
type run struct {
	cfg   Config
	dial  Dialer
	plan  Plan
	sizer *sizer
	// inflight counts the MIGRATEs sent and not answered.
	inflight atomic.Int64
	// listed is closed once the listing has ended: a worker the window
	// does not admit ends then, and the admitted ones send what is left.
	listed chan struct{}
}

// backoff waits after a failure, for a time drawn evenly below bound
// ("full jitter"); it reports false when ctx ends first. MIGRATEs that
// cross - one from A to B while another proxy's goes from B to A - each
// wait for the other until migrate_timeout and fail at the same instant;
// tried again after the same wait, they crossed again, round after round:
// seed 1074 of the fault schedule found a fleet of three proxies whose
// servers answered nothing for two minutes, every SCAN of the move timing
// out six seconds apart on every proxy
// (TestCrossingMigratesDoNotRetryInStep). Drawn at random, two waits
// that began together end apart, and the MIGRATEs meet again only by
// chance. A SCAN that timed out behind such a MIGRATE waits the same way.
func backoff(ctx context.Context, bound time.Duration) bool {
	return sleep(ctx, rand.N(max(bound, 1)))
}

// sleep waits d; it reports false when ctx ends first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
