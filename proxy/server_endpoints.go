package proxy

import (
	"context"
	"log/slog"
	"net"
	"net/http"
)

// sideEndpoints are what a server serves beside its pools, each on a
// listening socket of its own: the metrics endpoint, the stats port and
// the admin endpoint, nil when not configured. Server.mu guards them;
// Server.startSide starts them.
type sideEndpoints struct {
	metrics   *http.Server
	metricsLn net.Listener
	stats     *statsPort
	admin     *http.Server
	adminLn   net.Listener
}

// MetricsAddr returns the address of the /metrics endpoint, or nil.
func (s *Server) MetricsAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return listenerAddr(s.side.metricsLn)
}

// AdminAddr returns the address of the admin endpoint, or nil.
func (s *Server) AdminAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return listenerAddr(s.side.adminLn)
}

// StatsAddr returns the address of the stats port, or nil.
func (s *Server) StatsAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return listenerAddr(s.side.statsLn())
}

// close closes the endpoints at once, for a start that failed.
func (e *sideEndpoints) close() {
	if e.metrics != nil {
		e.metrics.Close()
	}
	if e.stats != nil {
		e.stats.close()
	}
	if e.admin != nil {
		e.admin.Close()
	}
}

// shutdown closes the endpoints, letting the requests they serve finish
// until ctx is done, for a server that shuts down.
func (e *sideEndpoints) shutdown(ctx context.Context) {
	if e.metrics != nil {
		_ = e.metrics.Shutdown(ctx)
	}
	if e.admin != nil {
		_ = e.admin.Shutdown(ctx)
	}
	if e.stats != nil {
		e.stats.close()
	}
}

// statsLn returns the stats port's listening socket, or nil.
func (e *sideEndpoints) statsLn() net.Listener {
	if e.stats == nil {
		return nil
	}
	return e.stats.ln
}

// listenerAddr returns ln's address, or nil for no listener.
func listenerAddr(ln net.Listener) net.Addr {
	if ln == nil {
		return nil
	}
	return ln.Addr()
}

// logListening logs where the endpoints listen, as each pool's address
// is logged: an operator, or a script reading the log, finds where to
// point a browser, a scraper or an exporter, also for an address of port
// 0.
func (e *sideEndpoints) logListening(log *slog.Logger, g *GlobalConfig) {
	https := g.AdminTLS != nil
	if e.adminLn != nil {
		log.Info("listening", "endpoint", "admin", "addr", e.adminLn.Addr().String(), "tls", https,
			"serves", "/status, /v1/pools, /v1/membership, /metrics", "token", g.AdminTokenFile != "")
	}
	if e.metricsLn != nil {
		log.Info("listening", "endpoint", "metrics", "addr", e.metricsLn.Addr().String(), "tls", https, "serves", "/metrics",
			"token", g.AdminTokenFile != "")
	}
	if e.stats != nil {
		log.Info("listening", "endpoint", "stats", "addr", e.stats.ln.Addr().String(), "tls", https && g.StatsTLS,
			"serves", "nutcracker's stats JSON")
	}
}
