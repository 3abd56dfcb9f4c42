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

	"github.com/kolco-dev/kolco"
)

// Server is a running proxy: one listener per pool, a goroutine per client
// connection, pooled pipelined connections to the memcached servers.
type Server struct {
	log    *slog.Logger
	met    *metrics
	budget *budget // kolco.buffer_limit

	// mu guards the fields below.
	mu        sync.Mutex
	cfg       *Config
	listeners map[string]*listener // by pool name
	clients   map[net.Conn]*client
	lastID    uint64 // the last client's id
	closed    bool   // shutting down: draining the clients
	aborted   bool   // past the shutdown's deadline: clients closed
	// side are the endpoints beside the pools: metrics, stats, admin.
	side sideEndpoints
	// sockets are the listening sockets the server opens or inherits.
	sockets sockets
	// inheritedViews are the nodes the gossip pools of the process this
	// one took over from served (see InheritViews); tookOver is set once
	// sockets are inherited.
	inheritedViews map[string][]kolco.Node
	tookOver       bool
	// handover, when set, takes the clients to a new process in a drain;
	// adopting is where clients come from a process this one took over
	// from (see Server.HandOver, Server.Adopt).
	handover *clientHandover
	adopting *net.UnixConn
	// sources follow the membership sources of pools, by pool name;
	// placed says since when each pool places by its fingerprint.
	sources poolSources
	placed  placedSince
	// fleet is what the pools' sweeps read to ask their peers, outside mu.
	fleet sweepFleet
	// memory is set by ManageMemory.
	memory bool
	// certs are the TLS files of the pools, read again when they change.
	certs certRegistry
	// retries hold a failed reload to be tried again.
	retries reloadRetries

	wg sync.WaitGroup // accept loops, clients, retired pools
}

// New returns a server for a configuration; log may be nil (then
// slog.Default is used). Call [Server.Start] to serve.
func New(cfg *Config, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	s := &Server{log: log, met: newMetrics(), cfg: cfg, budget: newBudget(DefaultGlobalConfig().BufferLimit),
		listeners: map[string]*listener{}, clients: map[net.Conn]*client{}}
	s.retries = reloadRetries{mu: &s.mu, apply: s.reload, log: log, fails: s.met.reloadFails}
	s.met.reg.MustRegister(collector{s}, sourceCollector{s}, trafficCollector{s}, s.retries.gauge())
	return s
}

// Start builds the pools, listens on every pool's address and on the
// metrics address, and serves in the background. On error nothing is left
// running. The error is a [*ConfigError] for a configuration that does
// not validate or a placement that cannot be built, or the listen error.
// Settings left at their zero value are read as their defaults.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrServerClosed
	}
	if err := s.cfg.Validate(); err != nil {
		return err
	}
	client, err := s.certs.peerClient(&s.cfg.Global, s.cfg.dir())
	if err != nil {
		return err
	}
	s.fleet.setPeers(peerAddrs(&s.cfg.Global), client) // before any pool can sweep
	want, cfg := s.cfg, s.cfg.WithDefaults()
	first, differ, err := recordedStart(cfg)
	if err != nil {
		return err
	}
	t, sources, err := s.prepareSourced(context.Background(), first)
	if err != nil {
		return err
	}
	if err := s.startSide(&t.cfg.Global); err != nil {
		t.undo()
		sources.undo()
		s.side.close()
		return err
	}
	s.commit(t)
	sources.commit()
	if len(differ) > 0 {
		// Served over the servers its state file records, which hold
		// its keys (see recordedStart), a pool changes to the
		// configuration's as a reload would change it. On error it
		// stays on those, and the change is tried again as a failed
		// reload is (see Server.ReloadFile).
		for _, name := range differ {
			s.log.Warn("the state file records the pool over other servers than the configuration: serving those, which hold its keys, and applying the configuration's as a change",
				"pool", name, "path", cfg.statePath(), "recorded", serverList(first.Pools[name].nodes()), "configured", serverList(cfg.Pools[name].nodes()))
		}
		if t, sources, err := s.prepareSourced(context.Background(), cfg); err != nil {
			s.retries.failed(want, err)
		} else {
			s.commit(t)
			sources.commit()
		}
	}
	s.side.logListening(s.log, &t.cfg.Global)
	s.sockets.closeUnclaimed(s.log)
	s.acceptWhenPlaced()
	go s.watchCerts()
	if s.memory {
		go s.returnMemory()
	}
	return nil
}

// startSide starts what listens beside the pools: the metrics endpoint,
// the stats port and the admin endpoint, as configured. The caller holds
// mu.
func (s *Server) startSide(g *GlobalConfig) error {
	tlsCfg, err := s.certs.adminTLS(g, s.cfg.dir())
	if err != nil {
		return err
	}
	if g.MetricsListen != "" {
		if err := s.startMetrics(adminAddr(g.MetricsListen), g.AdminTokenFile, tlsCfg); err != nil {
			return err
		}
	}
	if g.StatsListen != "" {
		statsTLS := tlsCfg
		if !g.StatsTLS {
			statsTLS = nil
		}
		if s.side.stats, err = s.startStatsPort(g.StatsListen, g.StatsInterval, statsTLS); err != nil {
			return err
		}
	}
	if g.AdminListen != "" {
		s.side.admin, s.side.adminLn, err = s.startAdmin(g, tlsCfg)
	}
	return err
}

func (s *Server) startMetrics(addr, tokenFile string, tlsCfg *tls.Config) error {
	var token []byte
	if tokenFile != "" {
		var err error
		if token, err = readToken(inDir(s.cfg.dir(), tokenFile)); err != nil {
			return err
		}
	}
	ln, err := s.sockets.listenTCP(addr)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", s.met.handler())
	s.side.metrics = &http.Server{Handler: requireToken(mux, token), ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	s.side.metricsLn = ln
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.side.metrics.Serve(tlsListener(ln, tlsCfg)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("the metrics endpoint stopped serving", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return nil
}

// Addr returns the address the named pool listens on, or nil.
func (s *Server) Addr(pool string) net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.listeners[pool]; l != nil {
		return l.ln.Addr()
	}
	return nil
}

// Shutdown stops accepting, lets every client's requests in flight finish
// and their replies be written (until ctx is done; then connections are
// closed), closes the pools and waits for every goroutine the server
// started.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.closed = true
	for _, l := range s.listeners {
		l.close()
	}
	for _, c := range s.clients {
		c.drains.handover.Store(s.handover)
		c.drain()
	}
	if s.adopting != nil {
		s.adopting.Close() // no client comes from a process this one took over from
	}
	if s.handover != nil {
		s.log.Info("shutting down: listeners closed, handing each client to the new process once its requests in flight are answered", "clients", len(s.clients))
	} else {
		s.log.Info("shutting down: listeners closed, answering the requests in flight", "clients", len(s.clients))
	}
	s.mu.Unlock()
	s.stopSources()
	start := time.Now()
	s.side.shutdown(ctx)
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		s.abort()
		<-done
	}
	for _, l := range s.listeners {
		l.pool.Load().close()
	}
	if s.handover != nil {
		s.handover.conn.Close() // every client is handed over or gone
	}
	if err != nil {
		s.log.Warn("shut down: clients still open at the deadline were closed", "took", time.Since(start), "err", err)
	} else {
		s.log.Info("shut down", "took", time.Since(start))
	}
	return err
}

// abort closes every client connection, and fails the requests still
// waiting for a server, which would otherwise hold their clients until the
// pool's timeout. For a shutdown past its deadline.
func (s *Server) abort() {
	s.mu.Lock()
	s.aborted = true
	for c := range s.clients {
		c.Close()
	}
	s.mu.Unlock()
	for _, l := range s.listeners {
		l.pool.Load().abort()
	}
}
