package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/chart"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/ring"
	"github.com/kolco-dev/kolco/sim"
	"github.com/kolco-dev/kolco/sim/report"
)

// setupFlags choose the contenders of an experiment: one or more
// algorithms, and for the ring one or more vnode counts.
type setupFlags struct {
	algos   string
	hash    string
	vnodes  string
	article bool
}

func (s *setupFlags) register(fs *pflag.FlagSet, defVNodes string) {
	fs.StringVar(&s.algos, "algo", "ring", "comma-separated algorithms to compare: "+strings.Join(algo.Names(), ", "))
	fs.StringVar(&s.hash, "hash", keyhash.Default, "key hash: "+strings.Join(keyhash.Names(), ", "))
	fs.StringVar(&s.vnodes, "vnodes", defVNodes, "comma-separated virtual nodes per unit of weight (ring); one ring per value")
	registerArticle(fs, &s.article, "the article's semantics: md5 for the ring, md5 of \"node:key\" for rendezvous")
}

// setups returns one setup per algorithm, and per vnode count for the ring.
func (s *setupFlags) setups(fs *pflag.FlagSet) ([]sim.Setup, error) {
	vs, err := parseInts("--vnodes", s.vnodes, 1)
	if err != nil {
		return nil, err
	}
	if s.article && !fs.Changed("vnodes") {
		vs = []int{ring.ArticleConfig().VNodes} // the article's 100 points
	}
	var opts algo.Options
	opts.Article = s.article
	if fs.Changed("hash") { // else each algorithm's own default (xxh3; md5 in article mode; CRC16 for slots)
		h, err := keyhash.Parse(s.hash)
		if err != nil {
			return nil, usageError{err}
		}
		opts.Hash = h
	}
	var (
		out   []sim.Setup
		infos []algo.Info
	)
	for _, name := range splitIDs(s.algos) {
		name = strings.ToLower(name)
		a, ok := algo.Lookup(name)
		if !ok {
			return nil, unknownName("--algo", name, algo.Names())
		}
		infos = append(infos, a)
		if name != "ring" {
			out = append(out, sim.Setup{Algo: name, Opts: opts})
			continue
		}
		for _, v := range vs {
			o := opts
			o.VNodes = v
			out = append(out, sim.Setup{Algo: name, Opts: o})
		}
	}
	if len(out) == 0 {
		return nil, usagef("--algo names no algorithm")
	}
	if err := rejectUnread(fs, infos...); err != nil {
		return nil, err
	}
	return out, nil
}

// parseInts parses a comma-separated list of integers >= lo.
func parseInts(flag, s string, lo int) ([]int, error) {
	var out []int
	for _, f := range splitIDs(s) {
		v, err := strconv.Atoi(f)
		if err != nil || v < lo {
			return nil, usagef("%s: %q is not an integer >= %d", flag, f, lo)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, usagef("%s lists no values", flag)
	}
	return out, nil
}

// outputFlags choose how results are written: aligned tables, JSON or CSV
// on stdout, and optionally a chart file.
type outputFlags struct {
	asJSON, asCSV bool
	plot          string
}

func (o *outputFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&o.asJSON, "json", false, "print the results as one JSON document")
	fs.BoolVar(&o.asCSV, "csv", false, "print the tables as CSV with plain numbers (shares as fractions, bytes as counts), the table's title in the first column")
	fs.StringVar(&o.plot, "plot", "", "also draw a chart to FILE.svg or FILE.png")
}

// check validates the flags before any work is done.
func (o *outputFlags) check() error {
	if o.asJSON && o.asCSV {
		return usagef("--json and --csv exclude each other")
	}
	if o.plot != "" {
		// A file that cannot be written is found now, not after a run
		// of minutes.
		if err := chart.Check(o.plot); errors.Is(err, chart.ErrFormat) {
			return usageError{err}
		} else if err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
	}
	return nil
}

// tabular is an experiment's result: tables for people, and the same
// with plain numbers for CSV.
type tabular interface {
	Tables(report.Format) []report.Table
}

// emit writes the chart, if asked, and then the result on stdout. The chart
// comes first so that a failure leaves no partial output behind.
func (o *outputFlags) emit(cmd *cobra.Command, res tabular, draw func() chart.Chart) error {
	if o.plot != "" {
		if err := chart.Save(o.plot, draw()); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
	}
	w := cmd.OutOrStdout()
	switch {
	case o.asJSON:
		return writeJSON(w, res)
	case o.asCSV:
		return report.WriteCSV(w, res.Tables(report.Raw))
	}
	return report.WriteText(w, res.Tables(report.Human))
}

// keysFlag is the size of a synthetic key sample.
func keysFlag(fs *pflag.FlagSet, p *int, def int) {
	fs.IntVar(p, "keys", def, "number of synthetic keys \"key:0\", \"key:1\", ...")
}

// simInputs checks what the sim subcommands with synthetic keys share -
// the algorithm flags, the output flags and --keys - and returns the
// setups to compare.
func simInputs(fs *pflag.FlagSet, sf *setupFlags, of *outputFlags, keys int) ([]sim.Setup, error) {
	setups, err := sf.setups(fs)
	if err != nil {
		return nil, err
	}
	if err := of.check(); err != nil {
		return nil, err
	}
	if err := checkKeys(keys); err != nil {
		return nil, err
	}
	return setups, nil
}

func checkKeys(n int) error { return atLeast("keys", n, 1) }

// atLeast returns the usage error of an integer flag below lo, naming that
// flag alone: a message that lists every flag of a check blames the ones
// given right too.
func atLeast(flag string, v, lo int) error {
	if v < lo {
		return usagef("--%s must be at least %d (got %d)", flag, lo, v)
	}
	return nil
}

// defaultVNodes returns the ring's default vnode count as a flag default.
func defaultVNodes() string { return strconv.Itoa(ring.DefaultVNodes) }
