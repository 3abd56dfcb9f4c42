package proxy

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"reflect"
	"syscall"
	"time"
)

// Reload applies a new validated configuration without dropping clients:
// pools whose settings did not change are kept as they are (connections,
// health); changed pools are rebuilt and serve every request read from then
// on, while requests in flight finish on the old pool, which is closed
// after them. A pool whose listen address changed moves to the new
// address; its open client connections stay and use the new pool. A
// removed pool stops listening and its clients are closed once their
// requests in flight are answered. On error nothing changes.
//
// Limits read when a client connects (max_value_size, max_keys,
// max_pending) apply to new connections; metrics_listen needs a restart.
func (s *Server) Reload(cfg *Config) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrServerClosed
	}
	type change struct {
		l     *listener // existing listener, or nil
		newLn *listener // a new listener, when the address is new
		pool  *pool     // the new pool, nil when unchanged
		// remode applies the new pool's socket mode to the kept
		// listener, once the reload can no longer fail.
		remode bool
	}
	changes := map[string]*change{}
	undo := func() {
		for _, ch := range changes {
			if ch.newLn != nil {
				ch.newLn.ln.Close()
			}
			if ch.pool != nil {
				ch.pool.close()
			}
		}
	}
	for _, name := range cfg.PoolNames() {
		pc := cfg.Pools[name]
		ch := &change{l: s.listeners[name]}
		changes[name] = ch
		if ch.l != nil && reflect.DeepEqual(*ch.l.pool.Load().cfg, *pc) {
			continue
		}
		p, err := newPool(name, pc, s.log, s.met)
		if err != nil {
			undo()
			return fmt.Errorf("%w: pool %q: %w", ErrBadConfig, name, err)
		}
		if ch.l != nil {
			old := ch.l.pool.Load()
			p.stats = old.stats // figures survive a reload
			if err := p.inherit(old); err != nil {
				undo() // p is not started yet: nothing of it to stop
				return fmt.Errorf("%w: pool %q: %w", ErrBadConfig, name, err)
			}
		}
		p.start()
		ch.pool = p
		if ch.l == nil || !sameAddress(ch.l.pool.Load().cfg.Listen, pc.Listen) {
			if ch.newLn, err = s.listen(name, pc.Listen, p); err != nil {
				undo()
				return err
			}
		} else {
			ch.remode = true
		}
	}
	// Everything is ready: switch.
	for name, l := range s.listeners {
		if _, kept := changes[name]; !kept {
			s.retire(l, true)
			delete(s.listeners, name)
		}
	}
	for name, ch := range changes {
		if ch.pool == nil {
			continue
		}
		if ch.l != nil {
			old := ch.l.pool.Swap(ch.pool)
			s.retirePool(old)
			if ch.remode {
				if err := remode(ch.pool.cfg.Listen); err != nil {
					s.log.Error("reload: socket mode", "pool", name, "err", err)
				}
			}
			if ch.newLn != nil {
				ch.l.ln.Close() // its clients stay, now on the new pool
			}
		}
		if ch.newLn != nil {
			if ch.l != nil {
				// Moved: the old address's clients and the new one's
				// share the pool from now on, through every reload.
				ch.newLn.pool = ch.l.pool
			}
			s.listeners[name] = ch.newLn
			s.acceptIn(ch.newLn)
		}
	}
	s.cfg = cfg
	s.met.reloads.Inc()
	s.log.Info("configuration reloaded", "pools", len(cfg.Pools))
	return nil
}

// retire stops a removed pool's listener and clients.
func (s *Server) retire(l *listener, stopClients bool) {
	l.ln.Close()
	if stopClients {
		for c, cl := range s.clients {
			if cl == l {
				stopReading(c)
			}
		}
	}
	s.retirePool(l.pool.Load())
}

// retirePool closes p once its requests in flight are done.
func (s *Server) retirePool(p *pool) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		p.close()
	}()
}

// RunOptions configures [Run].
type RunOptions struct {
	// Path is the configuration file.
	Path string
	// Log receives the proxy's structured logs; nil means text logs on
	// stderr at the config's kolco.log_level.
	Log *slog.Logger
	// WatchInterval is how often the file is checked for changes; 0 means
	// one second, negative disables the check (SIGHUP still reloads).
	WatchInterval time.Duration
	// Started, when not nil, is called with the running server.
	Started func(*Server)
}

// Run loads the configuration, serves it until ctx is done, reloads it on
// SIGHUP and when the file's contents change (a file that no longer
// validates is logged and ignored), and shuts down gracefully within the
// configured shutdown_timeout.
func Run(ctx context.Context, opts RunOptions) error {
	cfg, err := LoadConfig(opts.Path)
	if err != nil {
		return err
	}
	log := opts.Log
	if log == nil {
		var level slog.Level
		_ = level.UnmarshalText([]byte(cfg.Global.LogLevel)) // validated; "" is info
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	}
	seen, _ := os.ReadFile(opts.Path)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	s := New(cfg, log)
	if err := s.Start(); err != nil {
		return err
	}
	if opts.Started != nil {
		opts.Started(s)
	}
	every := opts.WatchInterval
	if every == 0 {
		every = time.Second
	}
	var tick <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), ms(s.cfg.Global.ShutdownTimeout))
			defer cancel()
			return s.Shutdown(sctx)
		case <-hup:
			log.Info("SIGHUP: reloading", "path", opts.Path)
			seen = s.reloadFile(opts.Path)
		case <-tick:
			if cur, err := os.ReadFile(opts.Path); err == nil && !bytes.Equal(cur, seen) {
				log.Info("configuration file changed: reloading", "path", opts.Path)
				seen = s.reloadFile(opts.Path)
			}
		}
	}
}

// reloadFile reloads from path and returns the contents it read.
func (s *Server) reloadFile(path string) []byte {
	data, err := os.ReadFile(path)
	if err != nil {
		s.met.reloadFails.Inc()
		s.log.Error("reload", "err", err)
		return data
	}
	cfg, err := ParseConfig(data)
	if err == nil {
		err = s.Reload(cfg)
	}
	if err != nil {
		s.met.reloadFails.Inc()
		s.log.Error("reload failed; keeping the running configuration", "err", err)
	}
	return data
}
