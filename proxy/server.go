package proxy

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Server is a running proxy: one listener per pool, a goroutine per client
// connection, pooled pipelined connections to the memcached servers.
type Server struct {
	log    *slog.Logger
	met    *metrics
	budget *budget // kolco.buffer_limit

	// mu guards the fields below, and the parts' that say so.
	mu  sync.Mutex
	cfg *Config
	// config is cfg, for Config to read without mu, which a source's
	// version being applied holds through its prepare (a process's signal
	// loop reads it every second).
	config atomic.Pointer[Config]
	// listening are the pools' listeners, the sockets and the clients.
	listening *listening
	// side are the endpoints beside the pools: metrics, stats, admin.
	side sideEndpoints
	// sourcing are the membership sources the pools follow.
	sourcing *sourcing
	// fleet is what the pools' sweeps read to ask their peers, outside mu.
	fleet sweepFleet
	// memory is set by ManageMemory.
	memory bool
	// certs are the TLS files of the pools, read again when they change.
	certs certRegistry
	// retries hold a failed reload to be tried again.
	retries reloadRetries
	// reads are what the admin endpoint, stats port and metrics read of
	// the server.
	reads *adminReads

	wg sync.WaitGroup // accept loops, clients, retired pools
}

// New returns a server for a configuration; log may be nil (then
// slog.Default is used). Call [Server.Start] to serve.
func New(cfg *Config, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	s := &Server{log: log, met: newMetrics(), cfg: cfg, budget: newBudget(DefaultGlobalConfig().BufferLimit)}
	s.config.Store(cfg)
	s.reads = &adminReads{entries: s.poolEntries, config: s.Config, rewriteState: s.rewriteState,
		fleet: &s.fleet, met: s.met, budget: s.budget, certs: &s.certs}
	s.listening = newListening(&s.mu, &s.wg, log, s.budget)
	s.side = sideEndpoints{sockets: &s.listening.sockets, reads: s.reads, log: log, wg: &s.wg}
	s.sourcing = &sourcing{mu: &s.mu, listening: s.listening, fleet: &s.fleet, certs: &s.certs, log: log, wg: &s.wg,
		apply: func(ctx context.Context, views map[string]*sourceView) error {
			t, err := s.prepare(ctx, s.cfg, views)
			if err == nil {
				s.commit(t)
			}
			return err
		}}
	s.retries = reloadRetries{mu: &s.mu, log: log, fails: s.met.reloadFails,
		apply: func(ctx context.Context, cfg *Config) error {
			// Tried again in the background: a shutdown, a handover or
			// a reload does not wait for it.
			return s.sourcing.yield.run(ctx, func(ctx context.Context) error { return s.reload(ctx, cfg) })
		}}
	s.met.reg.MustRegister(collector{s.reads}, sourceCollector{s.reads}, trafficCollector{s.reads}, s.retries.gauge())
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
	if s.listening.closed {
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
	if err := s.side.start(&t.cfg.Global, s.cfg.dir()); err != nil {
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
	s.side.logListening(&t.cfg.Global)
	s.listening.sockets.closeUnclaimed(s.log)
	s.sourcing.acceptWhenPlaced()
	go s.certs.watch(s.listening.stopped, s.log)
	if s.memory {
		go returnMemory(s.budget, s.listening.stopped)
	}
	return nil
}

// Addr returns the address the named pool listens on, or nil.
func (s *Server) Addr(pool string) net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.listening.byName[pool]; l != nil {
		return l.ln.Addr()
	}
	return nil
}

// Shutdown stops accepting, lets every client's requests in flight finish
// and their replies be written (until ctx is done; then connections are
// closed), closes the pools and waits for every goroutine the server
// started.
func (s *Server) Shutdown(ctx context.Context) error {
	s.sourcing.lockFirst() // a source's apply yields
	if s.listening.closed {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.listening.drain()
	s.mu.Unlock()
	s.mu.Lock()
	s.retries.stop() // a failed reload is not tried again
	sources := s.sourcing.stop()
	s.mu.Unlock()
	for _, ps := range sources {
		ps.close()
	}
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
		s.listening.abort()
		<-done
	}
	for _, l := range s.listening.byName {
		l.pool.Load().close()
	}
	if h := s.listening.handover; h != nil {
		h.conn.Close() // every client is handed over or gone
	}
	if err != nil {
		s.log.Warn("shut down: clients still open at the deadline were closed", "took", time.Since(start), "err", err)
	} else {
		s.log.Info("shut down", "took", time.Since(start))
	}
	return err
}
