package proxy

// logEndpoints logs where the endpoints beside the pools listen - the
// admin endpoint, /metrics, the stats port - as each pool's address is
// logged: an operator, or a script reading the log, finds where to point
// a browser, a scraper or an exporter, also for an address of port 0. The
// caller holds mu.
func (s *Server) logEndpoints(g *GlobalConfig) {
	https := g.AdminTLS != nil
	if s.adminLn != nil {
		s.log.Info("listening", "endpoint", "admin", "addr", s.adminLn.Addr().String(), "tls", https,
			"serves", "/status, /v1/pools, /v1/membership, /metrics", "token", g.AdminTokenFile != "")
	}
	if s.metricsLn != nil {
		s.log.Info("listening", "endpoint", "metrics", "addr", s.metricsLn.Addr().String(), "tls", https, "serves", "/metrics",
			"token", g.AdminTokenFile != "")
	}
	if s.stats != nil {
		s.log.Info("listening", "endpoint", "stats", "addr", s.stats.ln.Addr().String(), "tls", https && g.StatsTLS,
			"serves", "nutcracker's stats JSON")
	}
}
