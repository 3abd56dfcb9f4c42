package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// sideEndpoints are what a server serves beside its pools, each on a
// listening socket of its own: the metrics endpoint, the stats port and
// the admin endpoint, nil when not configured. Server.mu guards them;
// start starts them.
type sideEndpoints struct {
	metrics   *http.Server
	metricsLn net.Listener
	stats     *statsPort
	admin     *http.Server
	adminLn   net.Listener

	// sockets are the server's (listening.sockets, under Server.mu): an
	// endpoint listens on the socket it inherits, as a pool does.
	sockets *sockets
	// reads are what the endpoints serve of the server.
	reads *adminReads
	log   *slog.Logger
	// wg is Server.wg: a shutdown waits for the endpoints' goroutines.
	wg *sync.WaitGroup
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

// start starts what listens beside the pools: the metrics endpoint, the
// stats port and the admin endpoint, as configured, relative paths taken
// from dir. The caller holds Server.mu.
func (e *sideEndpoints) start(g *GlobalConfig, dir string) error {
	tlsCfg, err := e.reads.certs.adminTLS(g, dir)
	if err != nil {
		return err
	}
	if g.MetricsListen != "" {
		if err := e.startMetrics(adminAddr(g.MetricsListen), dir, g.AdminTokenFile, tlsCfg); err != nil {
			return err
		}
	}
	if g.StatsListen != "" {
		statsTLS := tlsCfg
		if !g.StatsTLS {
			statsTLS = nil
		}
		if e.stats, err = e.startStatsPort(g.StatsListen, g.StatsInterval, statsTLS); err != nil {
			return err
		}
	}
	if g.AdminListen != "" {
		e.admin, e.adminLn, err = e.startAdmin(g, dir, tlsCfg)
	}
	return err
}

// startMetrics serves /metrics on addr, asking for the token in the file
// tokenFile (taken from dir when relative) when it is not "". The caller
// holds Server.mu.
func (e *sideEndpoints) startMetrics(addr, dir, tokenFile string, tlsCfg *tls.Config) error {
	var token []byte
	if tokenFile != "" {
		var err error
		if token, err = readToken(inDir(dir, tokenFile)); err != nil {
			return err
		}
	}
	ln, err := e.sockets.listenTCP(addr)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", e.reads.met.handler())
	e.metrics = &http.Server{Handler: requireToken(mux, token), ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(e.log.Handler(), slog.LevelDebug)}
	e.metricsLn = ln
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		if err := e.metrics.Serve(tlsListener(ln, tlsCfg)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			e.log.Error("the metrics endpoint stopped serving", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return nil
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
func (e *sideEndpoints) logListening(g *GlobalConfig) {
	log := e.log
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

// poolEntries returns the pools the server runs now, in name order, for
// the admin wing (adminReads.entries).
func (s *Server) poolEntries() []poolEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []poolEntry
	for _, name := range s.cfg.PoolNames() {
		if l := s.listening.byName[name]; l != nil {
			out = append(out, poolEntry{p: l.pool.Load(), ps: s.sourcing.byPool[name], since: s.sourcing.placed[name].at})
		}
	}
	return out
}
