package proxy

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kolco-dev/kolco/proxy/internal/pace"
)

// metrics holds the proxy's Prometheus collectors in a registry of its own
// (no global registration). The servers' figures are read from their
// counters at each scrape (see collector), so the request path touches no
// Prometheus counter for them.
type metrics struct {
	reg           *prometheus.Registry
	requests      *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	serverLatency *prometheus.HistogramVec
	clientErrors  *prometheus.CounterVec
	connections   *prometheus.GaugeVec
	rejected      *prometheus.CounterVec
	reloads       prometheus.Counter
	reloadFails   prometheus.Counter
	migs          *migMetrics
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kolco_proxy_requests_total", Help: "Client requests answered, by pool and command.",
		}, []string{"pool", "command"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kolco_proxy_request_duration_seconds",
			Help:    "Time from reading a request to its reply being ready, by pool and command.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16),
		}, []string{"pool", "command"}),
		clientErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kolco_proxy_client_errors_total", Help: "Malformed client requests, by pool.",
		}, []string{"pool"}),
		serverLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kolco_proxy_server_request_duration_seconds",
			Help:    "Time from sending a request to a server to its reply, by pool and server.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16),
		}, serverLabels),
		connections: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kolco_proxy_client_connections", Help: "Open client connections, by pool.",
		}, []string{"pool"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kolco_proxy_rejected_connections_total", Help: "Client connections refused over max_client_connections, by pool.",
		}, []string{"pool"}),
		reloads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kolco_proxy_reloads_total", Help: "Configuration reloads applied.",
		}),
		reloadFails: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kolco_proxy_reload_failures_total", Help: "Configuration reloads that failed (file unreadable or invalid, or a change that failed), each try of one tried again included.",
		}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.serverLatency, m.clientErrors,
		m.connections, m.rejected, m.reloads, m.reloadFails)
	m.migs = newMigMetrics(m.reg)
	return m
}

// handler serves the registry in the Prometheus text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// poolStats are one pool's figures, resolved once so that the request path
// does no label lookups.
type poolStats struct {
	m     *metrics
	pool  string
	front front
	// cmds are the figures of each command of the pool's front, by its
	// index (see front.commands): a pool sees few of Redis's some 240
	// commands, so a command's series are made at its first request
	// rather than up front.
	cmds         []atomic.Pointer[cmdStats]
	clientErrors prometheus.Counter
	connections  prometheus.Gauge
	rejected     prometheus.Counter

	// For the stats command, the stats port and the collector.
	started                              time.Time
	currConns, totalConns, rejectedConns atomic.Int64
	clientErrs                           atomic.Uint64
	// Bytes read from and written to clients; clients that ended the
	// connection, or whose connection failed; requests answered with an
	// error of the proxy's for a server's failure; the requests to servers
	// a multi-key request was split into.
	bytesIn, bytesOut        atomic.Uint64
	clientEOF, clientErr     atomic.Uint64
	forwardErrors, fragments atomic.Uint64
	// failovers are the servers the membership source repointed.
	failovers failovers
	// stateMissing is set when the pool started without its placement's
	// history while its servers held data (see afreshCheck.checkAfresh).
	stateMissing atomic.Pointer[StateMissing]
	// storeMoved counts the keys a store's moves moved, by the mover and
	// by requests.
	storeMoved atomic.Int64
	// latency counts the time of each request that moved no key, for a
	// store's mover, which paces itself by it (the pool's
	// migStats.clientLatency).
	latency *pace.Histogram
}

func (m *metrics) forPool(name string, f front) *poolStats {
	return &poolStats{
		m: m, pool: name, front: f, cmds: make([]atomic.Pointer[cmdStats], f.commands()),
		started:      time.Now(),
		clientErrors: m.clientErrors.WithLabelValues(name),
		connections:  m.connections.WithLabelValues(name),
		rejected:     m.rejected.WithLabelValues(name),
		latency:      &m.migFor(name).clientLatency,
	}
}

func (s *poolStats) clientError() {
	s.clientErrs.Add(1)
	s.clientErrors.Inc()
}

func (s *poolStats) connOpened() {
	s.currConns.Add(1)
	s.totalConns.Add(1)
	s.connections.Inc()
}

func (s *poolStats) connClosed() {
	s.currConns.Add(-1)
	s.connections.Dec()
}

func (s *poolStats) connRejected() {
	s.rejectedConns.Add(1)
	s.rejected.Inc()
}

// serverLabels label a server's metrics: its pool, its name (as twemproxy
// names it: the name given, else host, or host:port off port 11211) and
// its address, since two servers may share one.
var serverLabels = []string{"pool", "server", "addr"}
