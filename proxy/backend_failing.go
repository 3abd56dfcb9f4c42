package proxy

import (
	"context"
	"time"
)

// A server can fail without being marked down: under ejection none it
// never is, and under rehash or fail-fast it is only after
// server_failure_limit failures in a row. Its failures end with its next
// reply; a server that got no request since it came back would be shown
// failing for ever (the status page, /v1/pools), which is how a server
// that had been back for 36 minutes was once shown red. So such a server
// is probed as a down one is, at the health check's interval, and a probe
// it answers ends its failures; with probes off (health_check.interval:
// -1) it is shown up once server_retry_timeout has passed since its last
// failure, as twemproxy tries a server again then.

// probeFailing probes b when it is failing and not marked down, and ends
// its failures when it answers. It is called by the health loop, which
// probes down servers at the same pace.
func (hc *healthChecks) probeFailing(ctx context.Context, b *backend) {
	if hc.cfg.HealthCheck.Interval < 0 || b.health.isDown() || b.former || b.health.observedNow().failing == 0 {
		return
	}
	start := time.Now()
	if err := hc.front.probe(ctx, b); err != nil {
		hc.log.Debug("probe of a failing server failed", "server", b.name(), "addr", b.addr, "err", err)
		return
	}
	b.health.answeredSince(start)
}

// answeredSince ends the run of failures, as a reply does, unless a
// request failed after start: a probe sent at start was answered, and
// what failed since is newer than its answer.
func (h *health) answeredSince(start time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen.failing > 0 && h.seen.lastErrAt.Before(start) {
		h.failures = 0
		h.seen.failing = 0
	}
}

// failingNow reports whether a server not marked down shows as failing at
// now: some requests failed in a row and no reply came since - unless
// probes are off and retry has passed since the last failure.
func (o observed) failingNow(now time.Time, probes bool, retry time.Duration) bool {
	return o.failing > 0 && (probes || now.Sub(o.lastErrAt) < retry)
}
