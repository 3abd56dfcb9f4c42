package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/kolco-dev/kolco/proxy"
)

func newProxyCmd() *cobra.Command {
	var (
		config string
		check  bool
	)
	cmd := &cobra.Command{
		Use:   "proxy --config FILE",
		Short: "A memcached sharding proxy that takes a twemproxy config unchanged",
		Long: `Run a memcached sharding proxy. It reads twemproxy's nutcracker.yml as it is
(memcached pools: listen, hash, hash_tag, distribution, timeout, servers as
"host:port:weight [name]", auto_eject_hosts, server_retry_timeout, ...) and
places every key on the server twemproxy would, so that it can replace
nutcracker without moving a key. On top of that it reloads its config on
SIGHUP and when the file changes, lets a pool choose "ejection: rehash" or
"none" (twemproxy with and without auto_eject_hosts) or "ejection:
fail-fast" (no key ever read from a server that does not own it), probes
failed servers, speaks the meta protocol, serves
Prometheus /metrics (kolco.metrics_listen) and uses every core.

--check validates the file and explains what it would do, without serving.

  $ kolco proxy --check --config /etc/nutcracker/nutcracker.yml
  pool "alpha": memcached on 127.0.0.1:22121
    placement: ketama over fnv1a_64 of the whole key, as twemproxy 0.5 places it
    ...
  $ kolco proxy --config /etc/nutcracker/nutcracker.yml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if config == "" {
				return usagef("--config FILE is required")
			}
			if check {
				cfg, err := proxy.LoadConfig(config)
				if err != nil {
					return err
				}
				return cfg.Explain(cmd.OutOrStdout())
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			go func() {
				// The first signal starts a graceful shutdown; with the
				// handler gone, a second one ends the process at once.
				<-ctx.Done()
				stop()
			}()
			return proxyRun{path: config, watch: time.Second}.serve(ctx)
		},
	}
	cmd.Flags().StringVar(&config, "config", "", "the YAML config file (nutcracker.yml with optional kolco keys)")
	cmd.Flags().BoolVar(&check, "check", false, "validate and explain the config, then exit")
	return cmd
}

// proxyRun serves a configuration file.
type proxyRun struct {
	path string
	// log receives the proxy's logs; nil means text logs on stderr at the
	// file's kolco.log_level.
	log *slog.Logger
	// watch is how often the file is checked for changes; not above zero,
	// never (SIGHUP still reloads).
	watch time.Duration
	// started, when not nil, is called with the running server.
	started func(*proxy.Server)
}

// serve loads the configuration and serves it until ctx is done; it
// reloads it on SIGHUP and when the file's contents change (a file that
// does not validate is logged and counted, and changes nothing), and
// shuts down within the shutdown_timeout of the configuration it runs.
func (r proxyRun) serve(ctx context.Context) error {
	cfg, err := proxy.LoadConfig(r.path)
	if err != nil {
		return err
	}
	log := r.log
	if log == nil {
		var level slog.Level
		_ = level.UnmarshalText([]byte(cfg.Global.LogLevel)) // validated
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	}
	seen, _ := os.ReadFile(r.path)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	s := proxy.New(cfg, log)
	if err := s.Start(); err != nil {
		return err
	}
	if r.started != nil {
		r.started(s)
	}
	var tick <-chan time.Time
	if r.watch > 0 {
		t := time.NewTicker(r.watch)
		defer t.Stop()
		tick = t.C
	}
	reload := func() {
		// What is compared next is what was read now, applied or refused:
		// a file that does not validate is not retried until it changes.
		seen, _ = os.ReadFile(r.path)
		_ = s.ReloadFile(ctx, r.path) // logged and counted by the server
	}
	for {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), s.Config().Global.ShutdownTimeout)
			defer cancel()
			return s.Shutdown(sctx)
		case <-hup:
			log.Info("SIGHUP: reloading", "path", r.path)
			reload()
		case <-tick:
			if cur, err := os.ReadFile(r.path); err == nil && !bytes.Equal(cur, seen) {
				log.Info("configuration file changed: reloading", "path", r.path)
				reload()
			}
		}
	}
}
