package main

import (
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

func newProxyCmd() *cobra.Command {
	var (
		config, output string
		check          bool
		verbose        int
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
				return explainConfig(config, cmd.OutOrStdout())
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			go func() {
				// The first signal starts a graceful shutdown; with the
				// handler gone, a second one ends the process at once.
				<-ctx.Done()
				stop()
			}()
			run := proxyRun{path: config, watch: time.Second, settle: settleFor, logPath: output,
				verbose: -1, stderr: cmd.ErrOrStderr()}
			if cmd.Flags().Changed("verbose") {
				run.verbose = verbose
			}
			return run.serve(ctx)
		},
	}
	cmd.Flags().StringVar(&config, "config", "", "the YAML config file (nutcracker.yml with optional kolco keys)")
	cmd.Flags().BoolVar(&check, "check", false, "validate and explain the config, then exit")
	cmd.Flags().StringVarP(&output, "output", "o", "", "log to this file (reopened on SIGHUP) instead of stderr")
	cmd.AddCommand(newProxyLocateCmd(), newProxyPoolsCmd())
	cmd.Flags().IntVarP(&verbose, "verbose", "v", 5, "log level as nutcracker's -v: 0-3 errors, 4 warnings, 5-6 info, 7-11 debug (default: kolco.log_level)")
	return cmd
}
