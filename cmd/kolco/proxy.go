package main

// The parts of the proxy subcommand that use package proxy: serving a
// configuration file, with its signals, file watch, logs and threads, and
// handing the listening sockets over. The command line is proxy_cmd.go.

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kolco-dev/kolco/proxy"
)

// explainConfig validates the file at path and explains it to w (--check).
func explainConfig(path string, w io.Writer) error {
	cfg, err := proxy.LoadConfig(path)
	if err != nil {
		return err
	}
	return cfg.Explain(w)
}

// describeStats lists the stats port's fields (-D).
func describeStats(w io.Writer) error { return proxy.DescribeStats(w) }

// proxyRun serves a configuration file.
type proxyRun struct {
	path string
	// log receives the proxy's logs; nil means text logs to logPath (or
	// stderr) at the level of verbose, else of the file's kolco.log_level.
	log     *slog.Logger
	logPath string
	verbose int // nutcracker's -v; negative when not given
	stderr  io.Writer
	// watch is how often the file is checked for changes; not above zero,
	// never (SIGHUP still reloads). settle is how long a change must stay
	// the same before it is applied.
	watch, settle time.Duration
	// started, when not nil, is called with the running server.
	started func(*proxy.Server)
	// statsListen and statsInterval, when set, override the file's
	// kolco.stats_listen and kolco.stats_interval (nutcracker's -s, -a,
	// -i).
	statsListen   string
	statsInterval time.Duration
	// pidFile, when set, holds the process's pid while it serves.
	pidFile string
	// ready, when not nil, is told once the proxy serves (nil) or why it
	// cannot (see daemonize).
	ready func(error)
}

// proxyLogs is the running proxy's logger and what it writes to.
type proxyLogs struct {
	*slog.Logger
	file  *logFile
	level *slog.LevelVar
	fixed bool // the level was given on the command line
}

// logs opens the log output of the run.
func (r proxyRun) logs(cfg *proxy.Config) (*proxyLogs, error) {
	file, w, err := openLog(r.logPath, r.stderr)
	if err != nil {
		return nil, err
	}
	l := &proxyLogs{file: file, level: new(slog.LevelVar), fixed: r.verbose >= 0}
	l.setLevel(cfg)
	if r.verbose >= 0 {
		l.level.Set(nutcrackerLevel(r.verbose))
	}
	l.Logger = r.log
	if l.Logger == nil {
		l.Logger = slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l.level}))
	}
	return l, nil
}

// setLevel follows the configuration's log_level, unless the command line
// set the level.
func (l *proxyLogs) setLevel(cfg *proxy.Config) {
	var level slog.Level
	if l.fixed || level.UnmarshalText([]byte(cfg.Global.LogLevel)) != nil {
		return
	}
	l.level.Set(level)
}

// serve loads the configuration and serves it until ctx is done. SIGHUP
// reopens the log file and reloads the configuration at once; a change of
// the file is applied once it has settled (see fileWatch). A file that
// does not validate is logged and counted, and changes nothing. It shuts
// down within the shutdown_timeout of the configuration it runs.
func (r proxyRun) serve(ctx context.Context) error {
	cfg, err := proxy.LoadConfig(r.path)
	if err != nil {
		return err
	}
	if r.statsListen != "" {
		cfg.Global.StatsListen = r.statsListen
	}
	if r.statsInterval > 0 {
		cfg.Global.StatsInterval = r.statsInterval
	}
	logs, err := r.logs(cfg)
	if err != nil {
		return err
	}
	defer logs.file.Close()
	watch := newFileWatch(r.path, r.settle)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	s := proxy.New(cfg, logs.Logger)
	if err := s.Start(); err != nil {
		return err
	}
	if r.pidFile != "" {
		if err := writePidFile(r.pidFile); err != nil {
			_ = s.Shutdown(context.Background())
			return err
		}
		defer removePidFile(r.pidFile)
	}
	if r.ready != nil {
		r.ready(nil)
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
	for {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), s.Config().Global.ShutdownTimeout)
			defer cancel()
			return s.Shutdown(sctx)
		case <-hup:
			if err := logs.file.reopen(); err != nil {
				logs.Error("SIGHUP: keeping the old log file", "err", err)
			}
			logs.Info("SIGHUP: log file reopened; reloading", "path", r.path)
			data, err := os.ReadFile(r.path)
			if err != nil {
				logs.Error("reload failed; keeping the running configuration", "err", err)
				continue
			}
			watch.applied(data)
			r.reload(ctx, s, logs, data)
		case now := <-tick:
			if data := watch.check(now); data != nil {
				logs.Info("configuration file changed and settled: reloading", "path", r.path)
				r.reload(ctx, s, logs, data)
			}
		}
	}
}

// reload applies the file's contents; a failure is logged and counted by
// the server.
func (r proxyRun) reload(ctx context.Context, s *proxy.Server, logs *proxyLogs, data []byte) {
	if s.ReloadData(ctx, r.path, data) == nil {
		logs.setLevel(s.Config())
	}
}
