package proxy

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/kolco-dev/kolco/membership"
)

// checkFileSettle is how long CheckFiles lets a membership file settle:
// it reads the file as it is, not as it may become.
const checkFileSettle = time.Millisecond

// CheckFiles reads the files c names besides itself that a start reads,
// as the start reads them, and returns what it would meet there: the
// state file (kolco.state_file, for the pools that start from it), which
// a start refuses when it does not parse or does not restore the
// placement it records (one over other servers than the configuration's
// is served, and the configuration applied to it as a change); and each pool's membership file, which a start
// follows with the configured servers meanwhile, reported stale, when it
// is missing, does not parse, names another pool or lists servers the
// pool cannot serve. The error is a [*ConfigError] naming the pool and
// key, whose message names the file and, where it can, the line. It is
// what --check runs, so that a file that would stop the start, or leave a
// pool on its placeholder servers, fails the check.
func (c *Config) CheckFiles() error {
	c = c.WithDefaults()
	first, _, err := recordedStart(c)
	if err != nil {
		return err
	}
	states, err := readStatesFor(c, func(string) bool { return false })
	if err != nil {
		return err
	}
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, name := range c.PoolNames() {
		pc := c.Pools[name]
		if _, err := states.layoutFor(name, first.Pools[name], discard); err != nil {
			return &ConfigError{Pool: name, Key: GlobalKey + ".state_file", Err: err}
		}
		if m := pc.Membership; m != nil && m.File != nil {
			if err := checkMembershipFile(c, name, pc); err != nil {
				return &ConfigError{Pool: name, Key: "membership", Err: fmt.Errorf("%w (a start would serve the pool's configured servers, stale, until the file is fixed)", err)}
			}
		}
	}
	return nil
}

// checkMembershipFile reads pool name's membership file as its source
// does, and checks that the pool can serve what it lists.
func checkMembershipFile(c *Config, name string, pc *PoolConfig) error {
	f := pc.Membership.File
	src := &membership.File{Path: inDir(c.dir(), f.Path), Format: cmp.Or(f.Format, membership.FormatNutcracker),
		Pool: f.Pool, Settle: checkFileSettle}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := src.Read(ctx)
	if err != nil {
		return err
	}
	if err := checkNodes(v.Nodes, isTwemproxy(pc)); err != nil {
		return fmt.Errorf("%s: %w", src.Path, err)
	}
	if pc.Replicas > len(v.Nodes) {
		return fmt.Errorf("%s: %d replicas of each key need at least %d servers (got %d)", src.Path, pc.Replicas, pc.Replicas, len(v.Nodes))
	}
	if _, err := newPicker(pc, v.Nodes); err != nil {
		return fmt.Errorf("%s: %w", src.Path, err)
	}
	return nil
}

// dir returns the directory relative paths of c are taken from: its
// file's, or none.
func (c *Config) dir() string {
	if c.Path == "" {
		return ""
	}
	return filepath.Dir(c.Path)
}
