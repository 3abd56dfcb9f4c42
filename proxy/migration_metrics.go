package proxy

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kolco-dev/kolco/proxy/internal/pace"
)

// migMetrics are the figures of warm changes and sweeps, by pool.
type migMetrics struct {
	fallbacks, hits, copies, refused, raced, cleans, cleanFails *prometheus.CounterVec
	windowOpen, views                                           *prometheus.GaugeVec
	opened, closed                                              *prometheus.CounterVec
	listed, orphans, deleted, kept, sweepErrs, deferred         *prometheus.CounterVec
	sweeping, waiting                                           *prometheus.GaugeVec

	mu    sync.Mutex
	pools map[string]*migStats
}

func newMigMetrics(reg *prometheus.Registry) *migMetrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, append([]string{"pool"}, labels...))
		reg.MustRegister(c)
		return c
	}
	gauge := func(name, help string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{"pool"})
		reg.MustRegister(g)
		return g
	}
	return &migMetrics{
		fallbacks:  counter("kolco_proxy_warm_fallbacks_total", "Keys missed at their server during a migration window and looked up at their previous servers."),
		hits:       counter("kolco_proxy_warm_fallback_hits_total", "Fallback lookups that found the key at a previous server."),
		copies:     counter("kolco_proxy_warm_copies_total", "Values found by a fallback and stored at the key's new server (add mode, remaining TTL, flags)."),
		refused:    counter("kolco_proxy_warm_copies_refused_total", "Fallback copies the new server refused because it held the key already (a write came first)."),
		raced:      counter("kolco_proxy_warm_copies_skipped_total", "Fallback copies not made: a write or delete of the key came meanwhile, the value had run out, or the window closed."),
		cleans:     counter("kolco_proxy_warm_previous_deletes_total", "Deletes sent to previous servers by writes and deletes during a migration window."),
		cleanFails: counter("kolco_proxy_warm_previous_failures_total", "Reads and deletes at previous servers that failed; the server is not read again in the window."),
		windowOpen: gauge("kolco_proxy_warm_window_open", "1 while a migration window is open."),
		views:      gauge("kolco_proxy_warm_window_placements", "Previous placements the open migration window falls back through."),
		opened:     counter("kolco_proxy_warm_windows_total", "Migration windows opened by changes of placement."),
		closed:     counter("kolco_proxy_warm_windows_closed_total", "Migration windows closed, by reason (time, quiet).", "reason"),
		listed:     counter("kolco_proxy_sweep_listed_total", "Items listed by sweeps (lru_crawler metadump).", "server"),
		orphans:    counter("kolco_proxy_sweep_orphans_total", "Items a sweep found on a server that does not own their key.", "server"),
		deleted:    counter("kolco_proxy_sweep_deleted_total", "Orphaned items a sweep deleted.", "server"),
		kept:       counter("kolco_proxy_sweep_kept_total", "Orphaned items a sweep kept: written since they were listed, gone already, or owned again.", "server"),
		sweepErrs:  counter("kolco_proxy_sweep_errors_total", "Sweeps of a server that failed or were cut short.", "server"),
		sweeping:   gauge("kolco_proxy_sweep_running", "1 while a sweep runs."),
		deferred: counter("kolco_proxy_sweep_deferred_total",
			"Sweeps of a pool on a membership source put off because a proxy of kolco.admin_peers places otherwise (differs), could not be asked (unreachable) or may be behind its source (stale).", "reason"),
		waiting: gauge("kolco_proxy_sweep_waiting", "1 while a sweep waits for every proxy of kolco.admin_peers to place as this one."),
		pools:   map[string]*migStats{},
	}
}

// migStats are one pool's migration figures: the pool's series, resolved
// once, and the running totals the log and the tests read. A pool that
// replaces another of the same name shares them.
type migStats struct {
	m                                                  *migMetrics
	pool                                               string
	fallbacks, hits, copies, refused, raced, cleans    atomic.Uint64
	cleanFails, listed, orphans, deleted, kept, errors atomic.Uint64
	deferred                                           atomic.Uint64
	deferWhy                                           atomic.Pointer[string] // why the sweep waits, while it does
	windowOpen, views, sweeping, waiting               prometheus.Gauge
	opened                                             prometheus.Counter
	closed                                             *prometheus.CounterVec
	// clientLatency counts the time each client request took, for a
	// store's mover to pace itself by; recentLatency keeps its counts of
	// the last seconds without a move, sinceMove its counts when the last
	// move ended, and lastMove that move.
	clientLatency pace.Histogram
	recentLatency pace.Recent
	sinceMove     atomic.Pointer[pace.Counts]
	lastMove      atomic.Pointer[moveSummary]
}

// migFor returns the migration figures of the pool name.
func (m *metrics) migFor(name string) *migStats {
	mm := m.migs
	mm.mu.Lock()
	defer mm.mu.Unlock()
	if s := mm.pools[name]; s != nil {
		return s
	}
	s := &migStats{m: mm, pool: name, windowOpen: mm.windowOpen.WithLabelValues(name), views: mm.views.WithLabelValues(name),
		sweeping: mm.sweeping.WithLabelValues(name), waiting: mm.waiting.WithLabelValues(name), opened: mm.opened.WithLabelValues(name),
		closed: mm.closed.MustCurryWith(prometheus.Labels{"pool": name})}
	mm.pools[name] = s
	return s
}

// add counts n in the pool's series of c and in its total.
func (s *migStats) add(c *prometheus.CounterVec, total *atomic.Uint64, n int) {
	if n == 0 {
		return
	}
	total.Add(uint64(n))
	c.WithLabelValues(s.pool).Add(float64(n))
}

// addServer counts n in the pool and server's series of c and in its
// total.
func (s *migStats) addServer(c *prometheus.CounterVec, total *atomic.Uint64, server string, n int) {
	if n == 0 {
		return
	}
	total.Add(uint64(n))
	c.WithLabelValues(s.pool, server).Add(float64(n))
}
