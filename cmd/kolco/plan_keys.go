package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/plan"
	"github.com/kolco-dev/kolco/sim/workload"
)

// metadumpTimeout bounds the time one server has to list its keys.
const metadumpTimeout = 2 * time.Minute

// config returns the plan's cost model from the flags, and checks the key
// sample's flags, before any file or server is read.
func (lf *planFlags) config(fs *pflag.FlagSet) (plan.Config, error) {
	var cfg plan.Config
	if err := lf.tr.check(fs); err != nil {
		return cfg, err
	}
	switch {
	case !(lf.rps >= 0) || math.IsInf(lf.rps, 1):
		return cfg, usagef("--rps must be a finite number >= 0 (got %v)", lf.rps)
	case lf.hitRate > 1 && lf.hitRate <= 100: // a percentage
		return cfg, usagef("--hit-rate is a fraction in [0, 1] (got %v; for %v%% write %v)", lf.hitRate, lf.hitRate, lf.hitRate/100)
	case !(lf.hitRate >= 0 && lf.hitRate <= 1):
		return cfg, usagef("--hit-rate must be a fraction in [0, 1] (got %v)", lf.hitRate)
	case lf.warm && lf.rps == 0 && lf.tr.file == "":
		return cfg, usagef("--warm needs --rps or --trace: they give the database's load")
	case len(lf.down) > 0 && !lf.warm:
		return cfg, usagef("--down needs --warm: only a warm change reads the previous owners")
	case !(lf.moveRate >= 0) || math.IsInf(lf.moveRate, 1):
		return cfg, usagef("--move-rate must be a finite number of keys a second >= 0 (got %v)", lf.moveRate)
	case fs.Changed("move-rate") && lf.moveRateFrom != "":
		return cfg, usagef("--move-rate and --move-rate-from both give the move's pace: give one")
	case fs.Changed("redis-db") && !lf.redis:
		return cfg, usagef("--redis-db needs --redis: memcached servers have no databases")
	case lf.redisDB < 0:
		return cfg, usagef("--redis-db must be >= 0 (got %d)", lf.redisDB)
	}
	cfg.MoveRate = lf.moveRate
	if lf.redis && !fs.Changed("move-rate") {
		cfg.MoveRate = defaultMoveRate
	}
	cfg.RPS, cfg.HitRate, cfg.Warm = lf.rps, lf.hitRate, lf.warm
	if lf.data != "" {
		var err error
		if cfg.Data, err = keys.ParseBytes(lf.data); err != nil {
			return cfg, usageError{fmt.Errorf("--data: %w", err)}
		}
	}
	if lf.tr.file != "" {
		return cfg, nil // the keys come from the trace: tf.check refused the other sources
	}
	given := []string{}
	for _, f := range []string{"keys-file", "keys-from", "keys-from-servers", "keys"} {
		if fs.Changed(f) {
			given = append(given, "--"+f)
		}
	}
	if len(given) > 1 {
		return cfg, usagef("%s exclude each other: the key sample comes from one of them", strings.Join(given, " and "))
	}
	if len(given) == 0 || given[0] == "--keys" {
		_, err := lf.synthetic()
		return cfg, err
	}
	for _, f := range []string{"size", "size-dist", "rate-dist"} {
		if fs.Changed(f) {
			return cfg, usagef("--%s shapes the synthetic sample: it does not apply to %s", f, given[0])
		}
	}
	return cfg, nil
}

// keySet reads the key sample: a key file, the keys memcached servers
// hold (those given, or the servers of the placement before), or the
// synthetic sample.
func (lf *planFlags) keySet(ctx context.Context, first planStep) (*keys.Set, error) {
	switch {
	case lf.keysFile != "":
		f, err := os.Open(lf.keysFile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		ks, err := keys.Parse(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", lf.keysFile, err)
		}
		return ks, nil
	case len(lf.keysFrom) > 0:
		return lf.serverKeys(ctx, lf.keysFrom)
	case lf.keysFromServers:
		var addrs []string
		for _, n := range first.p.Nodes() {
			addrs = append(addrs, addrOf(n))
		}
		return lf.serverKeys(ctx, addrs)
	}
	return lf.synthetic()
}

// synthetic returns the synthetic sample the flags describe.
func (lf *planFlags) synthetic() (*keys.Set, error) {
	if err := checkKeys(lf.keys); err != nil {
		return nil, err
	}
	mean, err := keys.ParseBytes(lf.size)
	if err != nil {
		return nil, usageError{fmt.Errorf("--size: %w", err)}
	}
	sizes, err := workload.ParseDist(lf.sizeDist)
	if err != nil {
		return nil, usageError{fmt.Errorf("--size-dist: %w", err)}
	}
	rates, err := workload.ParseDist(lf.rateDist)
	if err != nil {
		return nil, usageError{fmt.Errorf("--rate-dist: %w", err)}
	}
	ks := keys.Synthetic(lf.keys)
	ks.Sizes, ks.Rates = sizes.Values(lf.keys, mean, 1), rates.Values(lf.keys, 1, 2)
	return ks, nil
}

// serverKeys lists the keys the servers at addrs hold, with their sizes:
// memcached's items with metadump, or, with --redis, Redis's keys with
// SCAN and MEMORY USAGE. A key held by several counts once, as the first
// server listed holds it.
func (lf *planFlags) serverKeys(ctx context.Context, addrs []string) (*keys.Set, error) {
	var items []keys.Item
	for _, a := range addrs {
		c, cancel := context.WithTimeout(ctx, metadumpTimeout)
		var got []keys.Item
		var err error
		if lf.redis {
			got, err = keys.RedisItems(c, a, keys.RedisOptions{Password: os.Getenv("REDISCLI_AUTH"), DB: lf.redisDB})
		} else {
			got, err = keys.Metadump(c, a)
		}
		cancel()
		if err != nil {
			return nil, fmt.Errorf("listing the keys of %s: %w", a, err)
		}
		items = append(items, got...)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%w: the servers %s hold no keys to plan with", kolco.ErrBadConfig, strings.Join(addrs, ", "))
	}
	return keys.FromItems(items), nil
}

// writeMoves writes the moved keys of each step to --moves: one line
// "KEY<TAB>FROM<TAB>TO", and in a history the step and whether the key
// returns to a server that held it before.
func (lf *planFlags) writeMoves(cmd *cobra.Command, steps []*plan.Result, history bool) (err error) {
	if lf.moves == "" {
		return nil
	}
	var w io.Writer = cmd.OutOrStdout()
	if lf.moves != "-" {
		f, err := os.Create(lf.moves)
		if err != nil {
			return fmt.Errorf("--moves: %w", err)
		}
		defer func() {
			if cerr := f.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("--moves: %w", cerr)
			}
		}()
		w = f
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	for _, r := range steps {
		for _, m := range r.Moves {
			bw.WriteString(moveField(m.Key) + "\t" + moveField(m.From) + "\t" + moveField(m.To))
			if history {
				stale := "-"
				if m.Returns {
					stale = "stale"
				}
				bw.WriteString("\t" + strconv.Itoa(r.Step) + "\t" + stale)
			}
			bw.WriteByte('\n')
		}
	}
	return bw.Flush()
}

// moveField returns s as a field of a moves line: as it is, or Go-quoted
// when it holds a tab, a line end or a leading quote, which would break
// the line's columns.
func moveField(s string) string {
	if strings.ContainsAny(s, "\t\r\n") || strings.HasPrefix(s, `"`) {
		return strconv.Quote(s)
	}
	return s
}
