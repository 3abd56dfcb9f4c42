package main

import (
	"os"
	"os/signal"
	"syscall"

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
			return proxy.Run(ctx, proxy.RunOptions{Path: config})
		},
	}
	cmd.Flags().StringVar(&config, "config", "", "the YAML config file (nutcracker.yml with optional kolco keys)")
	cmd.Flags().BoolVar(&check, "check", false, "validate and explain the config, then exit")
	return cmd
}
