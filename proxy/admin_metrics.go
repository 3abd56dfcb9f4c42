package proxy

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// A server's figures as metrics, read from its counters at each scrape.
var (
	descUp = prometheus.NewDesc("kolco_proxy_server_up",
		"1 when the server is not marked down, else 0.", serverLabels, nil)
	descShare = prometheus.NewDesc("kolco_proxy_server_key_share",
		"The share of the pool's keys the server holds under the placement in use (with replicas, of the copies), measured over 65536 sample keys.", serverLabels, nil)
	descServerCounters = []struct {
		desc *prometheus.Desc
		get  func(*serverStats) *atomic.Uint64
	}{
		{prometheus.NewDesc("kolco_proxy_server_requests_total", "Requests sent to the server.", serverLabels, nil),
			func(s *serverStats) *atomic.Uint64 { return &s.requests }},
		{prometheus.NewDesc("kolco_proxy_server_errors_total", "Requests to the server that failed (refused, timed out, down).", serverLabels, nil),
			func(s *serverStats) *atomic.Uint64 { return &s.errors }},
		{prometheus.NewDesc("kolco_proxy_ejections_total", "Times the server was ejected or marked down.", serverLabels, nil),
			func(s *serverStats) *atomic.Uint64 { return &s.ejections }},
		{prometheus.NewDesc("kolco_proxy_restores_total", "Times the server was restored after being marked down.", serverLabels, nil),
			func(s *serverStats) *atomic.Uint64 { return &s.restores }},
		{prometheus.NewDesc("kolco_proxy_server_sent_bytes_total", "Bytes of requests sent to the server.", serverLabels, nil),
			func(s *serverStats) *atomic.Uint64 { return &s.requestBytes }},
		{prometheus.NewDesc("kolco_proxy_server_received_bytes_total", "Bytes of replies received from the server.", serverLabels, nil),
			func(s *serverStats) *atomic.Uint64 { return &s.responseBytes }},
		{prometheus.NewDesc("kolco_proxy_get_hits_total", "Keys of get, gets, gat, gats and mg the server found.", serverLabels, nil),
			func(s *serverStats) *atomic.Uint64 { return &s.hits }},
		{prometheus.NewDesc("kolco_proxy_get_misses_total", "Keys of get, gets, gat, gats and mg the server did not find.", serverLabels, nil),
			func(s *serverStats) *atomic.Uint64 { return &s.misses }},
	}
	descBytesIn = prometheus.NewDesc("kolco_proxy_client_read_bytes_total",
		"Bytes read from clients, by pool.", []string{"pool"}, nil)
	descBytesOut = prometheus.NewDesc("kolco_proxy_client_written_bytes_total",
		"Bytes written to clients, by pool.", []string{"pool"}, nil)
	descStateMissing = prometheus.NewDesc("kolco_proxy_state_missing",
		"1 when the pool, of a history-dependent distribution, started without the record of its placement's history while its servers held data: keys placed afresh.", []string{"pool"}, nil)
	descStoreMoved = prometheus.NewDesc("kolco_proxy_store_moved_keys_total",
		"Keys a store moved to their new servers, by its mover and by requests.", []string{"pool"}, nil)
	descStoreMove = prometheus.NewDesc("kolco_proxy_store_move_keys",
		"A store's move under way: keys scanned on the old servers, estimated to move, moved by the mover and by requests, MIGRATEs failed.", []string{"pool", "kind"}, nil)
	descStoreMoving = prometheus.NewDesc("kolco_proxy_store_moving",
		"1 while a store's move is under way (waiting, moving or paused), else 0.", []string{"pool"}, nil)
	descStoreETA = prometheus.NewDesc("kolco_proxy_store_move_eta_seconds",
		"The seconds a store's move has left at its rate so far, while one is under way and the rate is known.", []string{"pool"}, nil)
	descFailovers = prometheus.NewDesc("kolco_proxy_failovers_total",
		"Times the membership source repointed the server at another address (a Sentinel failover).", []string{"pool", "server"}, nil)
	descFailoverUnavailable = prometheus.NewDesc("kolco_proxy_failover_unavailable_seconds",
		"The seconds the server failed at its old address before its last failover, as the proxy saw it.", []string{"pool", "server"}, nil)
	descReplicaLag = prometheus.NewDesc("kolco_proxy_replica_lag_seconds",
		"How far behind its primary a replica the pool reads from is (replica_reads); -1 when it did not answer.", []string{"pool", "server", "addr"}, nil)
	descReplicaReadable = prometheus.NewDesc("kolco_proxy_replica_readable",
		"1 while reads go to the replica: its lag is known and within replica_reads.max_lag.", []string{"pool", "server", "addr"}, nil)
	descCertExpiry = prometheus.NewDesc("kolco_proxy_tls_certificate_expiry_seconds",
		"Seconds until a TLS certificate the proxy presents (tls, server_tls) expires, by file; negative once expired.", []string{"file"}, nil)
	descBuffered = prometheus.NewDesc("kolco_proxy_buffered_bytes",
		"Bytes of requests and replies held, against kolco.buffer_limit.", nil, nil)
)

// collector reports the figures of the servers and pools the proxy runs
// now.
type collector struct{ reads *adminReads }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descUp
	ch <- descShare
	for _, d := range descServerCounters {
		ch <- d.desc
	}
	ch <- descBytesIn
	ch <- descBytesOut
	ch <- descStateMissing
	ch <- descStoreMoved
	ch <- descStoreMove
	ch <- descStoreMoving
	ch <- descStoreETA
	ch <- descFailovers
	ch <- descFailoverUnavailable
	ch <- descReplicaLag
	ch <- descReplicaReadable
	ch <- descCertExpiry
	ch <- descBuffered
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c.reads.pools() {
		ch <- prometheus.MustNewConstMetric(descBytesIn, prometheus.CounterValue, float64(p.stats.bytesIn.Load()), p.name)
		ch <- prometheus.MustNewConstMetric(descBytesOut, prometheus.CounterValue, float64(p.stats.bytesOut.Load()), p.name)
		missing := 0.0
		if p.stats.stateMissing.Load() != nil {
			missing = 1
		}
		ch <- prometheus.MustNewConstMetric(descStateMissing, prometheus.GaugeValue, missing, p.name)
		if p.cfg.Store.Enabled {
			collectMove(ch, p)
		}
		collectFailovers(ch, p)
		shares := p.placing.shares()
		for _, b := range p.backends {
			labels := []string{p.name, b.name(), b.addr}
			up := 1.0
			if b.health.isDown() {
				up = 0
			}
			ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, up, labels...)
			ch <- prometheus.MustNewConstMetric(descShare, prometheus.GaugeValue, shares[b], labels...)
			for _, d := range descServerCounters {
				ch <- prometheus.MustNewConstMetric(d.desc, prometheus.CounterValue, float64(d.get(b.stats).Load()), labels...)
			}
			for _, r := range p.front.replicas(p, b.name()) {
				lag := r.LagMs / 1000
				if r.LagMs < 0 {
					lag = -1
				}
				ch <- prometheus.MustNewConstMetric(descReplicaLag, prometheus.GaugeValue, lag, p.name, b.name(), r.Addr)
				ch <- prometheus.MustNewConstMetric(descReplicaReadable, prometheus.GaugeValue, b2f(r.Readable), p.name, b.name(), r.Addr)
			}
		}
	}
	ch <- prometheus.MustNewConstMetric(descBuffered, prometheus.GaugeValue, float64(c.reads.budget.inUse()))
	for _, e := range c.reads.certs.expiries() {
		ch <- prometheus.MustNewConstMetric(descCertExpiry, prometheus.GaugeValue, time.Until(e.notAfter).Seconds(), e.file)
	}
}

// collectMove reports a store's move.
func collectMove(ch chan<- prometheus.Metric, p *pool) {
	ch <- prometheus.MustNewConstMetric(descStoreMoved, prometheus.CounterValue, float64(p.stats.storeMoved.Load()), p.name)
	ms, _ := p.mover.status()
	ch <- prometheus.MustNewConstMetric(descStoreMoving, prometheus.GaugeValue, b2f(ms != nil), p.name)
	if ms == nil {
		return
	}
	for _, k := range []struct {
		kind string
		n    int64
	}{{"scanned", ms.Scanned}, {"to_move", ms.ToMove}, {"moved", ms.Moved}, {"moved_by_requests", ms.MovedByRequests}, {"failed", ms.Failed}} {
		ch <- prometheus.MustNewConstMetric(descStoreMove, prometheus.GaugeValue, float64(k.n), p.name, k.kind)
	}
	if ms.ETA >= 0 {
		ch <- prometheus.MustNewConstMetric(descStoreETA, prometheus.GaugeValue, ms.ETA, p.name)
	}
}

// collectFailovers reports the pool's failovers per server.
func collectFailovers(ch chan<- prometheus.Metric, p *pool) {
	latest, counts := p.stats.failovers.snapshot()
	for server, n := range counts {
		ch <- prometheus.MustNewConstMetric(descFailovers, prometheus.CounterValue, float64(n), p.name, server)
	}
	last := map[string]float64{}
	for _, fo := range latest {
		last[fo.Server] = fo.Unavailable
	}
	for server, secs := range last {
		ch <- prometheus.MustNewConstMetric(descFailoverUnavailable, prometheus.GaugeValue, secs, p.name, server)
	}
}
