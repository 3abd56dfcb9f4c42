package main

import (
	"net"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
)

// proxyFlags are the proxy's command line: kolco's (--config, --check) and
// nutcracker's, so that a service's nutcracker command line works with only
// the program changed.
type proxyFlags struct {
	config        string // --config, -c/--conf-file
	check         bool   // --check, -t/--test-conf
	describe      bool   // -D/--describe-stats
	version       bool   // -V/--version
	daemonize     bool   // -d/--daemonize
	output        string // -o/--output
	verbose       int    // -v/--verbose
	pidFile       string // -p/--pid-file
	statsPort     int    // -s/--stats-port
	statsAddr     string // -a/--stats-addr
	statsInterval int    // -i/--stats-interval, ms
	mbuf          int    // -m/--mbuf-size, accepted and not needed
	watchConfig   bool   // --watch-config
	// nutcracker is set when the program runs as nutcracker: nutcracker's
	// defaults apply (the stats port on 0.0.0.0:22222, the config file
	// /etc/nutcracker/nutcracker.yml).
	nutcracker bool
}

// nutcracker's defaults.
const (
	nutcrackerConfig    = "/etc/nutcracker/nutcracker.yml"
	nutcrackerStatsPort = 22222
	nutcrackerStatsAddr = "0.0.0.0"
)

func newProxyCmd() *cobra.Command { return proxyCommand(&proxyFlags{}) }

func proxyCommand(f *proxyFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "proxy --config FILE",
		Short: "A memcached and Redis sharding proxy that takes a twemproxy config unchanged",
		Long: `Run a memcached and Redis sharding proxy. It reads twemproxy's nutcracker.yml as it is
(memcached and redis pools: listen, hash, hash_tag, distribution, timeout, servers as
"host:port:weight [name]", auto_eject_hosts, server_retry_timeout, ...) and
places every key on the server twemproxy would, so that it can replace
nutcracker without moving a key. On top of that it reloads its config on
SIGHUP (and, with --watch-config, when the file has changed and settled),
lets a pool choose
"ejection: rehash" or "none" (twemproxy with and without auto_eject_hosts) or
"ejection: fail-fast" (no key ever read from a server that does not own it),
probes failed servers, speaks the meta protocol, serves Prometheus /metrics
(kolco.metrics_listen), nutcracker's stats port and an admin endpoint that
says where a key lives (see "kolco proxy locate"), and uses every core.

--check validates the file and explains what it would do, without serving;
it also reads the files the configuration names that a start reads (the
state file, membership files) and fails, naming the file and line, on one
the start would refuse or a pool could not follow.

  $ kolco proxy --check --config /etc/nutcracker/nutcracker.yml
  pool "alpha": memcached on 127.0.0.1:22121
    placement: ketama over fnv1a_64 of the whole key, as twemproxy 0.5 places it
    ...
  $ kolco proxy --config /etc/nutcracker/nutcracker.yml

nutcracker's command line works unchanged, here or with kolco installed as
"nutcracker" (a symlink): -c/--conf-file, -t/--test-conf (as --check),
-s/--stats-port, -a/--stats-addr, -i/--stats-interval, -D/--describe-stats,
-v/--verbose, -o/--output (reopened on SIGHUP), -p/--pid-file,
-d/--daemonize, -V/--version, and -m/--mbuf-size (accepted; kolco sizes its
buffers itself):

  $ kolco proxy -c /etc/nutcracker.yml -s 22222 -v 6 -o /var/log/nutcracker.log
  $ ln -s "$(command -v kolco)" /usr/local/sbin/nutcracker
  $ nutcracker -d -c /etc/nutcracker.yml -p /run/nutcracker.pid

SIGHUP reopens the log file and reloads the configuration; SIGUSR2 hands the
listening sockets to a new process started from the same program (an
upgrade), which serves while this one finishes its clients' requests and
exits; SIGTTIN raises and SIGTTOU lowers the log level by one of -v's steps;
SIGTERM and SIGINT shut down. Each signal is logged by name, as nutcracker
logs it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", "the YAML config file (nutcracker.yml with optional kolco keys)")
	fl.StringVarP(&f.config, "conf-file", "c", "", "the config file, as nutcracker's -c (default /etc/nutcracker/nutcracker.yml as nutcracker)")
	fl.BoolVar(&f.check, "check", false, "validate and explain the config, then exit")
	fl.BoolVarP(&f.check, "test-conf", "t", false, "as --check (nutcracker's -t)")
	fl.BoolVarP(&f.describe, "describe-stats", "D", false, "print the stats port's fields and exit")
	fl.BoolVarP(&f.version, "version", "V", false, "print the version and exit")
	fl.BoolVarP(&f.daemonize, "daemonize", "d", false, "run in the background once serving (with -p, its pid in the pid file)")
	fl.StringVarP(&f.output, "output", "o", "", "log to this file (reopened on SIGHUP) instead of stderr")
	fl.IntVarP(&f.verbose, "verbose", "v", 5, "log level as nutcracker's -v: 0-3 errors, 4 warnings, 5-6 info, 7-11 debug (default: kolco.log_level)")
	fl.StringVarP(&f.pidFile, "pid-file", "p", "", "write the proxy's pid to this file while it runs")
	fl.IntVarP(&f.statsPort, "stats-port", "s", nutcrackerStatsPort, "serve nutcracker's JSON stats on this port (off unless -s or -a is given, or running as nutcracker)")
	fl.StringVarP(&f.statsAddr, "stats-addr", "a", nutcrackerStatsAddr, "the stats port's address")
	fl.IntVarP(&f.statsInterval, "stats-interval", "i", 30000, "refresh the stats port's figures every this many ms (default: kolco.stats_interval)")
	fl.IntVarP(&f.mbuf, "mbuf-size", "m", 16384, "accepted for nutcracker's command line; not needed (kolco sizes its buffers itself)")
	fl.BoolVar(&f.watchConfig, "watch-config", false, "apply the config file when it changes and has settled for 2 s (as kolco.watch_config: true); off, only SIGHUP reloads it, as in nutcracker")
	cmd.AddCommand(newProxyLocateCmd(), newProxyPoolsCmd(), newProxyRejoinCmd(), newProxyMoveCmd())
	return cmd
}

func (f *proxyFlags) run(cmd *cobra.Command) error {
	switch {
	case f.version:
		return printVersion(cmd.OutOrStdout())
	case f.describe:
		return describeStats(cmd.OutOrStdout())
	}
	if f.config == "" {
		if !f.nutcracker {
			return usagef("--config FILE (or -c FILE) is required")
		}
		f.config = nutcrackerConfig
	}
	if f.check {
		return explainConfig(f.config, cmd.OutOrStdout())
	}
	if f.daemonize && os.Getenv(readyEnv) == "" {
		return daemonize(f, cmd.Flags())
	}
	run := proxyRun{path: f.config, watch: time.Second, settle: settleFor, watchConfig: f.watchConfig, logPath: f.output,
		verbose: -1, stderr: cmd.ErrOrStderr(), pidFile: f.pidFile, ready: readyPipe()}
	if err := run.receiveHandover(); err != nil {
		return err
	}
	fl := cmd.Flags()
	if fl.Changed("verbose") {
		run.verbose = f.verbose
	}
	listen := net.JoinHostPort(f.statsAddr, strconv.Itoa(f.statsPort))
	switch {
	case fl.Changed("stats-port") || fl.Changed("stats-addr"):
		run.statsListen = listen
	case f.nutcracker:
		// nutcracker always serves its stats port: where the file says,
		// else at nutcracker's default.
		run.statsDefault = listen
	}
	if fl.Changed("stats-interval") {
		run.statsInterval = time.Duration(f.statsInterval) * time.Millisecond
	}
	if f.statsInterval <= 0 || f.statsPort < 0 || f.statsPort > 65535 {
		return usagef("-s wants a port and -i a positive interval (got %d and %d)", f.statsPort, f.statsInterval)
	}
	// SIGTERM and SIGINT start a graceful shutdown, logged (see
	// proxyRun.loop); a second one ends the process at once.
	err := run.serve(cmd.Context())
	if err != nil && run.ready != nil {
		run.ready(err)
	}
	return err
}

// receiveHandover reads what the process this one takes over from hands
// it, if any (SIGUSR2): its listening sockets, its clients' connections
// and the views of its pools' sources.
func (r *proxyRun) receiveHandover() error {
	inherited, err := inheritedListeners()
	if err != nil {
		return err
	}
	r.inherit = inherited
	if r.adopt, err = handedClients(); err != nil {
		return err
	}
	if r.views, err = handedViews(); err != nil {
		return err
	}
	if r.inherit == nil {
		r.views = nil // views are for a process taking over sockets
	}
	return nil
}
