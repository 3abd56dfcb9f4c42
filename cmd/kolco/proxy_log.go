package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
)

// logFile is the proxy's log output: a file reopened on SIGHUP, so that
// logrotate can move it away and the proxy goes on in a new one, as
// nutcracker does; or stderr.
type logFile struct {
	path string // empty for stderr
	// mu guards f.
	mu sync.Mutex
	f  *os.File
}

// openLog opens the log output: path, appended to, or stderr when empty.
func openLog(path string, stderr io.Writer) (*logFile, io.Writer, error) {
	l := &logFile{path: path}
	if path == "" {
		return l, stderr, nil
	}
	if err := l.reopen(); err != nil {
		return nil, nil, err
	}
	return l, l, nil
}

func (l *logFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Write(p)
}

// reopen opens the log file anew by its path and closes the old one; on
// error the old one stays.
func (l *logFile) reopen() error {
	if l.path == "" {
		return nil
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("log file: %w", err)
	}
	l.mu.Lock()
	old := l.f
	l.f = f
	l.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return nil
}

// Close closes the log file.
func (l *logFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}

// maxVerbosity is nutcracker's highest -v, its LOG_PVERB.
const maxVerbosity = 11

// levelVerbosity returns the verbosity, as nutcracker counts it, that a
// log level stands for: the lowest that nutcrackerLevel maps to it, so
// that from info (5, nutcracker's default) two SIGTTINs reach debug, as
// they do in nutcracker.
func levelVerbosity(l slog.Level) int {
	switch {
	case l >= slog.LevelError:
		return 3
	case l >= slog.LevelWarn:
		return 4
	case l >= slog.LevelInfo:
		return 5
	}
	return 7
}

// nutcrackerLevel maps nutcracker's verbosity (-v, 0 to 11, default 5:
// emerg, alert, crit, err, warn, notice, info, debug, and finer debug) to
// a log level: kolco logs at four levels, so 0-3 are errors, 5 and 6
// info, 7 to 11 debug (client and server connections opened and closed).
func nutcrackerLevel(v int) slog.Level {
	switch {
	case v <= 3:
		return slog.LevelError
	case v == 4:
		return slog.LevelWarn
	case v <= 6:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}
