package proxy

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Tries again of a reload that failed for a reason that may pass: the
// first after reloadRetryFirst, each later one after twice the time
// before, up to reloadRetryMost. A reload prepares every pool it changes
// - new pools dialing their servers, an added exclusive server emptied,
// keys listed - holding the server's lock, which a membership source's
// version and the admin endpoint wait for, as long as a server takes to
// time out: tries are spaced wider than a source's (source.go, 0.25 s up
// to 10 s), which change one pool. A server restarting or a link down for
// a moment is back within seconds, and a try every 30 s at most matches
// server_retry_timeout's default, after which an ejected server is tried
// again too: a change waits for its server no longer than traffic does.
const (
	reloadRetryFirst = time.Second
	reloadRetryMost  = 30 * time.Second
)

// reloadRetries holds the failed reload to be tried again, if any. The
// source loop's tries again (poolSource.start) follow one source and
// change one pool; a reload's is of the whole configuration, held here.
type reloadRetries struct {
	mu *sync.Mutex // the server's, which guards pending
	// apply applies a configuration as Server.Reload does, mu held; it
	// fails with ErrServerClosed once the server shuts down.
	apply   func(context.Context, *Config) error
	log     *slog.Logger
	fails   prometheus.Counter // kolco_proxy_reload_failures_total
	pending *reloadRetry
	waiting atomic.Bool // pending != nil, for the gauge, read without mu
}

// reloadRetry is a failed reload to be tried again: the configuration it
// applies, how long the next wait is, how many tries failed.
type reloadRetry struct {
	cfg   *Config
	wait  time.Duration
	tries int
	timer *time.Timer // the next try's
}

// passes reports whether a reload that failed with err may succeed later
// on the same configuration: not for one that does not validate, whose
// placement cannot be built or whose state file is refused (a
// [*ConfigError]), nor for a server closed or a caller that gave up.
func passes(err error) bool {
	var ce *ConfigError
	return !errors.As(err, &ce) && !errors.Is(err, ErrServerClosed) && !errors.Is(err, context.Canceled)
}

// gauge is kolco_proxy_reload_pending.
func (rr *reloadRetries) gauge() prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "kolco_proxy_reload_pending",
		Help: "1 while a reload that failed for a reason that may pass is to be tried again, else 0.",
	}, func() float64 {
		if rr.waiting.Load() {
			return 1
		}
		return 0
	})
}

// failed counts and logs a reload of cfg (nil: none parsed) that failed
// with err and, when err may pass, schedules it to be tried again; the
// line logged says when. The caller holds mu.
func (rr *reloadRetries) failed(cfg *Config, err error) {
	rr.retry(&reloadRetry{cfg: cfg, wait: reloadRetryFirst}, err)
}

// retry is failed for r, with the backoff of its tries so far.
func (rr *reloadRetries) retry(r *reloadRetry, err error) {
	rr.fails.Inc()
	rr.stop()
	if r.cfg == nil || !passes(err) {
		rr.log.Error("reload failed; keeping the running configuration", "err", err)
		return
	}
	r.tries++
	wait := r.wait
	r.wait = min(2*wait, reloadRetryMost)
	rr.pending = r
	rr.waiting.Store(true)
	rr.log.Error("reload failed; keeping the running configuration, and trying it again", "err", err,
		"failures", r.tries, "next_try_in", wait.String(), "next_try_at", time.Now().Add(wait).UTC().Format(time.RFC3339))
	r.timer = time.AfterFunc(wait, func() { rr.tryAgain(r) })
}

// tryAgain applies r's configuration again, unless a newer reload or a
// shutdown superseded it.
func (rr *reloadRetries) tryAgain(r *reloadRetry) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if rr.pending != r {
		return
	}
	switch err := rr.apply(context.Background(), r.cfg); {
	case err == nil:
		rr.log.Info("reload: the configuration tried again is applied", "failures_before", r.tries)
		rr.stop()
	case errors.Is(err, ErrServerClosed):
		rr.stop()
	default:
		rr.retry(r, err)
	}
}

// supersede drops the failed reload still to be tried again, for a newer
// one. The caller holds mu.
func (rr *reloadRetries) supersede() {
	if rr.pending != nil {
		rr.log.Info("reload: a newer reload supersedes the one to be tried again", "failures", rr.pending.tries)
	}
	rr.stop()
}

// stop drops the reload to be tried again, if any. The caller holds mu.
func (rr *reloadRetries) stop() {
	if rr.pending == nil {
		return
	}
	rr.pending.timer.Stop()
	rr.pending = nil
	rr.waiting.Store(false)
}
