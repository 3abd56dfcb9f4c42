package main

// The parts of the proxy subcommand that use package proxy: serving a
// configuration file, with its signals, file watch, logs and threads, and
// handing the listening sockets over. The command line is proxy_cmd.go.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"syscall"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/proxy"
)

// explainConfig validates the file at path, and the files it names that a
// start reads (the state file, membership files), and explains it to w
// (--check).
func explainConfig(path string, w io.Writer) error {
	cfg, err := proxy.LoadConfig(path)
	if err != nil {
		return err
	}
	if err := cfg.CheckFiles(); err != nil {
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
	// watch is how often the file is checked for changes while watching
	// is on (watchConfig, or the file's kolco.watch_config); not above
	// zero, never (SIGHUP still reloads). settle is how long a change must
	// stay the same before it is applied.
	watch, settle time.Duration
	watchConfig   bool
	// started, when not nil, is called with the running server.
	started func(*proxy.Server)
	// statsListen and statsInterval, when set, override the file's
	// kolco.stats_listen and kolco.stats_interval (nutcracker's -s, -a,
	// -i).
	statsListen   string
	statsInterval time.Duration
	// statsDefault is the stats port's address when the file sets none
	// (running as nutcracker).
	statsDefault string
	// pidFile, when set, holds the process's pid while it serves.
	pidFile string
	// ready, when not nil, is told once the proxy serves (nil) or why it
	// cannot (see daemonize and handover).
	ready func(error)
	// inherit are the listening sockets taken over from the process that
	// started this one, and adopt the socket its clients come on (see
	// handover).
	inherit map[string]net.Listener
	adopt   *net.UnixConn
	// views are the nodes the process that started this one served for
	// its pools on a gossip pool (see proxy.Server.InheritViews).
	views map[string][]kolco.Node
	// keepThreads leaves GOMAXPROCS alone (tests serving in-process).
	keepThreads bool
}

// threads sets the proxy's threads as kolco.threads says: a number fixes
// GOMAXPROCS, 0 adapts it to the load (proxy.AdaptThreads) until ctx is
// done; a GOMAXPROCS environment variable overrides both.
func (r proxyRun) threads(ctx context.Context, cfg *proxy.Config, log *slog.Logger) {
	switch {
	case os.Getenv("GOMAXPROCS") != "":
	case cfg.Global.Threads > 0:
		runtime.GOMAXPROCS(cfg.Global.Threads)
	default:
		go proxy.AdaptThreads(ctx, log)
	}
}

// proxyLogs is the running proxy's logger and what it writes to.
type proxyLogs struct {
	*slog.Logger
	file  *logFile
	out   io.Writer // what the log is written to: the file, or stderr
	level *slog.LevelVar
	// verbosity is the level as nutcracker's -v counts it (0 to 11),
	// which SIGTTIN raises and SIGTTOU lowers by one.
	verbosity int
	fixed     bool // the level was given on the command line, or by a signal
}

// logs opens the log output of the run.
func (r proxyRun) logs(cfg *proxy.Config) (*proxyLogs, error) {
	file, w, err := openLog(r.logPath, r.stderr)
	if err != nil {
		return nil, err
	}
	l := &proxyLogs{file: file, out: w, level: new(slog.LevelVar), fixed: r.verbose >= 0}
	l.setLevel(cfg)
	if r.verbose >= 0 {
		l.verbosity = min(r.verbose, maxVerbosity)
		l.level.Set(nutcrackerLevel(l.verbosity))
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
	l.verbosity = levelVerbosity(level)
}

// step raises (by 1) or lowers (by -1) the level by one of nutcracker's
// verbosities, within 0 to 11, as SIGTTIN and SIGTTOU do; the level then
// stays until a restart, whatever the file's kolco.log_level.
func (l *proxyLogs) step(by int) {
	l.verbosity = min(max(l.verbosity+by, 0), maxVerbosity)
	l.level.Set(nutcrackerLevel(l.verbosity))
	l.fixed = true
}

// always logs msg whatever the level, as nutcracker logs the signals it
// handles: an operator who sent one reads that it was taken.
func (l *proxyLogs) always(msg string, args ...any) {
	r := slog.NewRecord(time.Now(), slog.LevelInfo, msg, 0)
	r.Add(args...)
	_ = l.Handler().Handle(context.Background(), r)
}

// serve loads the configuration and serves it until ctx is done. SIGHUP
// reopens the log file and reloads the configuration at once; with
// watching on (--watch-config, kolco.watch_config), a change of the file
// is applied once it has settled (see fileWatch). A file that
// does not validate is logged and counted, and changes nothing. SIGUSR2
// hands the listening sockets to a new process (see handover). It shuts
// down within the shutdown_timeout of the configuration it runs.
func (r proxyRun) serve(ctx context.Context) error {
	cfg, loaded, err := r.loadConfig()
	if err != nil {
		return err
	}
	logs, err := r.logs(cfg)
	if err != nil {
		return err
	}
	defer logs.file.Close()
	sig, stopSignals := queueSignals(handledSignals...)
	defer stopSignals()
	s := proxy.New(cfg, logs.Logger)
	s.Inherit(r.inherit)
	if r.views != nil {
		s.InheritViews(r.views)
	}
	s.ManageMemory()
	if err := s.Start(); err != nil {
		logs.Error("cannot start", "err", err)
		return err
	}
	if r.adopt != nil {
		s.Adopt(r.adopt)
	}
	// Serving once each pool on a membership source serves its source's
	// version: taking over, the old process serves meanwhile.
	select {
	case <-s.Serving():
	case <-ctx.Done():
	}
	if !r.keepThreads {
		r.threads(ctx, cfg, logs.Logger)
	}
	if r.pidFile != "" {
		if err := writePidFile(r.pidFile); err != nil {
			logs.Error("cannot start", "err", err)
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
	r.loop(ctx, s, logs, sig, loaded)
	sctx, cancel := context.WithTimeout(context.Background(), s.Config().Global.ShutdownTimeout)
	defer cancel()
	return s.Shutdown(sctx)
}

// loadConfig reads the configuration file, with the stats port's flags
// over its settings, and returns it with the bytes it was read from; a
// file that cannot be read is logged as fatal.
func (r proxyRun) loadConfig() (*proxy.Config, []byte, error) {
	data, err := os.ReadFile(r.path)
	if err != nil {
		err = &proxy.ConfigError{Err: err}
		r.logFatal(err)
		return nil, nil, err
	}
	cfg, err := proxy.ParseConfig(data)
	if err != nil {
		err = fmt.Errorf("%s: %w", r.path, err)
		r.logFatal(err)
		return nil, nil, err
	}
	cfg.Path = r.path
	if r.statsListen != "" {
		cfg.Global.StatsListen = r.statsListen
	}
	if cfg.Global.StatsListen == "" {
		cfg.Global.StatsListen = r.statsDefault
	}
	if r.statsInterval > 0 {
		cfg.Global.StatsInterval = r.statsInterval
	}
	return cfg, data, nil
}

// logFatal writes why the proxy cannot start to the -o log file, besides
// stderr, where the error goes too: a service whose stderr goes nowhere
// (a daemon) says why it stopped where its operator reads its logs. It is
// used before the log is opened for the run (a file that does not load).
func (r proxyRun) logFatal(err error) {
	if r.logPath == "" || r.log != nil {
		return
	}
	file, w, ferr := openLog(r.logPath, r.stderr)
	if ferr != nil {
		return
	}
	defer file.Close()
	slog.New(slog.NewTextHandler(w, nil)).Error("cannot start", "err", err)
}

// loop handles signals and the file watch until ctx is done or the
// listening sockets were handed over; loaded is the file the proxy
// started from, what the watch compares the file with first.
func (r proxyRun) loop(ctx context.Context, s *proxy.Server, logs *proxyLogs, sig <-chan os.Signal, loaded []byte) {
	watch := newFileWatch(r.path, r.settle, loaded)
	var tick <-chan time.Time
	if r.watch > 0 {
		t := time.NewTicker(r.watch)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case got := <-sig:
			switch got {
			case syscall.SIGTERM, syscall.SIGINT:
				logSignal(logs, got, "exiting")
				// A second one ends the process at once.
				signal.Reset(got)
				return
			case syscall.SIGTTIN, syscall.SIGTTOU:
				by, what := 1, "up logging level"
				if got == syscall.SIGTTOU {
					by, what = -1, "down logging level"
				}
				logs.step(by)
				logSignal(logs, got, what, "verbosity", logs.verbosity, "level", logs.level.Level())
				continue
			case syscall.SIGSEGV:
				dumpCore(logs, got) // does not return
			case syscall.SIGUSR2:
				logSignal(logs, got, "handing the listening sockets over to a new process")
				if handover(s, logs.Logger) {
					return
				}
				continue
			}
			if err := logs.file.reopen(); err != nil {
				logs.Error("SIGHUP: keeping the old log file", "err", err)
			}
			logSignal(logs, got, "reopening log file, reloading the configuration", "path", r.path)
			data, err := os.ReadFile(r.path)
			if err != nil {
				logs.Error("reload failed; keeping the running configuration", "err", err)
				continue
			}
			watch.applied(data)
			r.reload(ctx, s, logs, data)
		case now := <-tick:
			if !r.watchConfig && !s.Config().Global.WatchConfig {
				continue // nutcracker's way: only SIGHUP and the admin reload apply the file
			}
			if data := watch.check(now); data != nil {
				logs.Info("configuration file changed and settled: reloading", "path", r.path)
				r.reload(ctx, s, logs, data)
			}
		}
	}
}

// handledSignals are the signals the running proxy handles, each logged by
// name as it comes: SIGHUP reloads, SIGUSR2 hands over, SIGTTIN and
// SIGTTOU raise and lower the log level, SIGTERM and SIGINT shut down, and
// a SIGSEGV sent by kill dumps core as nutcracker does (see dumpCore).
var handledSignals = []os.Signal{syscall.SIGHUP, syscall.SIGUSR2, syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGTERM, syscall.SIGINT, syscall.SIGSEGV}

// logSignal logs a signal taken, by number and name as nutcracker does
// ("signal 21 (SIGTTIN) received, up logging level"), whatever the level.
func logSignal(logs *proxyLogs, sig os.Signal, action string, args ...any) {
	n := sig.(syscall.Signal)
	logs.always(fmt.Sprintf("signal %d (%s) received, %s", int(n), signalName(n), action), args...)
}

// signalName returns a signal's name as C spells it: SIGHUP.
func signalName(s syscall.Signal) string {
	names := map[syscall.Signal]string{syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM",
		syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2", syscall.SIGTTIN: "SIGTTIN", syscall.SIGTTOU: "SIGTTOU", syscall.SIGSEGV: "SIGSEGV"}
	if n, ok := names[s]; ok {
		return n
	}
	return s.String()
}

// reload applies the file's contents; a failure is logged and counted by
// the server.
func (r proxyRun) reload(ctx context.Context, s *proxy.Server, logs *proxyLogs, data []byte) {
	if s.ReloadData(ctx, r.path, data) == nil {
		logs.setLevel(s.Config())
	}
}

// handover starts the program again with the same command line, hands it
// the server's listening sockets and waits until it serves, and reports
// whether it does: then this process stops accepting and drains its
// clients, handing each to the new one at a request boundary, while the
// new one accepts on the same sockets, so no client is refused and none
// loses a request. If the new process fails, this one goes on serving.
func handover(s *proxy.Server, log *slog.Logger) bool {
	err := startSuccessor(s, log)
	if err != nil {
		log.Error("SIGUSR2: no handover; serving on", "err", err)
		return false
	}
	return true
}

func startSuccessor(s *proxy.Server, log *slog.Logger) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	files, err := s.ListenerFiles()
	if err != nil {
		return err
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	ours, theirs, err := clientSockets()
	if err != nil {
		return err
	}
	fds := map[string]int{}
	var extra []*os.File
	for _, name := range slices.Sorted(maps.Keys(files)) {
		fds[name] = 3 + len(extra)
		extra = append(extra, files[name])
	}
	extra = append(extra, theirs, w)
	env, _ := json.Marshal(fds)
	cmd := &exec.Cmd{Path: exe, Args: os.Args, Stdout: os.Stdout, Stderr: os.Stderr, ExtraFiles: extra,
		Env: append(environ(), listenFDsEnv+"="+string(env), fmt.Sprintf("%s=%d", clientsFDEnv, 1+len(extra)),
			fmt.Sprintf("%s=%d", readyEnv, 2+len(extra)))}
	if views := s.Views(); len(views) > 0 {
		if data, _ := json.Marshal(views); len(data) <= maxViewsEnv {
			cmd.Env = append(cmd.Env, viewsEnv+"="+string(data))
		} else {
			log.Warn("SIGUSR2: the gossip pools' views are too large to hand over; the new process serves their configured servers until its member joins", "bytes", len(data))
		}
	}
	err = cmd.Start()
	w.Close()
	theirs.Close()
	if err != nil {
		ours.Close()
		return err
	}
	if word := readWord(r, handoverTimeout); word != "ready" {
		ours.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if word == "" {
			return errors.New("the new process did not serve")
		}
		return errors.New(word)
	}
	log.Info("SIGUSR2: the new process serves on the listening sockets; handing it the clients", "pid", cmd.Process.Pid)
	s.HandOver(ours)
	return cmd.Process.Release()
}
