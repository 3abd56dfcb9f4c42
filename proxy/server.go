package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server is a running proxy: one listener per pool, a goroutine per client
// connection, pooled pipelined connections to the memcached servers.
type Server struct {
	log *slog.Logger
	met *metrics

	// mu guards the fields below.
	mu        sync.Mutex
	cfg       *Config
	listeners map[string]*listener // by pool name
	clients   map[net.Conn]*listener
	closed    bool
	metrics   *http.Server
	metricsLn net.Listener

	wg sync.WaitGroup // accept loops, clients, retired pools
}

// listener accepts clients for one pool; the pool behind it changes on
// reload, and each request uses the pool current when it is read.
type listener struct {
	name string
	ln   net.Listener
	// pool is shared with the listener that replaces this one when the
	// pool moves to another address, so that clients accepted here follow
	// every later reload of the pool.
	pool *atomicPool
}

// New returns a server for a validated configuration; log may be nil
// (then slog.Default is used). Call [Server.Start] to serve.
func New(cfg *Config, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	return &Server{log: log, met: newMetrics(), cfg: cfg,
		listeners: map[string]*listener{}, clients: map[net.Conn]*listener{}}
}

// Start builds the pools, listens on every pool's address and on the
// metrics address, and serves in the background. On error nothing is left
// running. The error wraps [ErrBadConfig] for a placement that cannot be
// built, or is the listen error.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrServerClosed
	}
	pools, err := s.buildPools(s.cfg)
	if err != nil {
		return err
	}
	var started []*listener
	for _, name := range s.cfg.PoolNames() {
		l, err := s.listen(name, s.cfg.Pools[name].Listen, pools[name])
		if err != nil {
			for _, l := range started {
				l.ln.Close()
			}
			closePools(pools)
			return err
		}
		started = append(started, l)
	}
	if addr := s.cfg.Global.MetricsListen; addr != "" {
		if err := s.startMetrics(addr); err != nil {
			for _, l := range started {
				l.ln.Close()
			}
			closePools(pools)
			return err
		}
	}
	for _, l := range started {
		s.listeners[l.name] = l
		s.acceptIn(l)
	}
	return nil
}

func (s *Server) buildPools(cfg *Config) (map[string]*pool, error) {
	pools := map[string]*pool{}
	for _, name := range cfg.PoolNames() {
		p, err := newPool(name, cfg.Pools[name], s.log, s.met)
		if err != nil {
			closePools(pools)
			return nil, fmt.Errorf("%w: pool %q: %w", ErrBadConfig, name, err)
		}
		p.start()
		pools[name] = p
	}
	return pools, nil
}

func closePools(pools map[string]*pool) {
	for _, p := range pools {
		p.close()
	}
}

func (s *Server) listen(name, addr string, p *pool) (*listener, error) {
	spec, err := parseListen(addr)
	if err != nil {
		return nil, fmt.Errorf("pool %q: %w", name, err)
	}
	ln, err := spec.open()
	if err != nil {
		return nil, fmt.Errorf("pool %q: %w", name, err)
	}
	l := &listener{name: name, ln: ln, pool: new(atomicPool)}
	l.pool.Store(p)
	s.log.Info("listening", "pool", name, "addr", ln.Addr().String(), "servers", len(p.backends))
	return l, nil
}

func (s *Server) startMetrics(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", s.met.handler())
	s.metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	s.metricsLn = ln
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.metrics.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("metrics server", "err", err)
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

// MetricsAddr returns the address of the /metrics endpoint, or nil.
func (s *Server) MetricsAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.metricsLn == nil {
		return nil
	}
	return s.metricsLn.Addr()
}

func (s *Server) acceptIn(l *listener) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.acceptLoop(l)
	}()
}

func (s *Server) acceptLoop(l *listener) {
	backoff := time.Millisecond
	for {
		conn, err := l.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: wait, as net/http does.
			s.log.Warn("accept", "pool", l.name, "err", err)
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = time.Millisecond
		if !s.track(conn, l) {
			conn.Close()
			return
		}
		st := l.pool.Load().stats
		if st.currConns.Load() >= int64(l.pool.Load().cfg.MaxClientConnections) {
			st.connRejected()
			_, _ = conn.Write(appendErrorReply(nil, ErrTooManyConns))
			s.untrack(conn)
			conn.Close()
			continue
		}
		st.connOpened()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.untrack(conn)
			defer st.connClosed()
			s.serveClient(l, conn)
		}()
	}
}

func (s *Server) track(c net.Conn, l *listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.clients[c] = l
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.clients, c)
	s.mu.Unlock()
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
		l.ln.Close()
	}
	for c := range s.clients {
		stopReading(c)
	}
	s.mu.Unlock()
	if s.metrics != nil {
		_ = s.metrics.Shutdown(ctx)
	}
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
		s.mu.Lock()
		for c := range s.clients {
			c.Close()
		}
		s.mu.Unlock()
		// Requests still waiting for a server would hold their clients
		// until the pool's timeout: fail them now.
		for _, l := range s.listeners {
			l.pool.Load().abort()
		}
		<-done
	}
	for _, l := range s.listeners {
		l.pool.Load().close()
	}
	return err
}

// stopReading ends the client's request stream as if it had half-closed:
// requests already read are still answered.
func stopReading(c net.Conn) {
	if tc, ok := c.(interface{ CloseRead() error }); ok && tc.CloseRead() == nil {
		return
	}
	_ = c.SetReadDeadline(time.Now())
}
