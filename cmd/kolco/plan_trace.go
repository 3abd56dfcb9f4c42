package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kolco-dev/kolco/chart"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/mrc"
	"github.com/kolco-dev/kolco/sim/plan"
	"github.com/kolco-dev/kolco/sim/trace"
)

// traceFlags are kolco plan's flags for a plan from a trace.
type traceFlags struct {
	file       string
	format     string
	window     time.Duration
	top        int
	memory     []string
	eviction   string
	sampleKeys int
	plotCurve  string
	hitRate    bool // --hit-rate was given, to be refused where the trace says
}

func (tf *traceFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&tf.file, "trace", "", "plan from the requests of a trace FILE (- for stdin): redis-cli MONITOR output, memcached's watch stream, a Twitter cache-trace CSV or kolco's own")
	fs.StringVar(&tf.format, "trace-format", "auto", "the trace's format: auto, kolco, monitor, watch or twitter")
	fs.DurationVar(&tf.window, "window", 0, "with --trace: count the database's added misses over this long after the change, e.g. 10m (default and most: the trace's span)")
	fs.IntVar(&tf.top, "top", 5, "with --trace: the hottest keys listed for each node")
	fs.StringSliceVar(&tf.memory, "memory", nil, "with --trace: each cache node's memory, SIZE for all or ID=SIZE (comma-separated or repeated), e.g. 64MiB: adds miss-ratio curves")
	fs.StringVar(&tf.eviction, "eviction", "memcached", "with --memory: the nodes' eviction, memcached (its segmented LRU, items in slab chunks) or lru (key and value bytes)")
	fs.IntVar(&tf.sampleKeys, "sample-keys", trace.DefaultSampleKeys, "with --memory: the keys the miss-ratio curves sample at most (SHARDS)")
	fs.StringVar(&tf.plotCurve, "plot-curve", "", "with --memory: draw the pool's miss ratio against memory, before and after, to FILE.svg or FILE.png")
}

// check validates the trace flags against the others before anything is
// read.
func (tf *traceFlags) check(fs *pflag.FlagSet) error {
	if tf.file == "" {
		for _, f := range []string{"trace-format", "window", "top", "memory", "eviction", "sample-keys", "plot-curve"} {
			if fs.Changed(f) {
				return usagef("--%s reads a trace: give it with --trace", f)
			}
		}
		return nil
	}
	for _, f := range []string{"keys-file", "keys-from", "keys-from-servers", "keys", "size", "size-dist", "rate-dist", "redis-db"} {
		if fs.Changed(f) {
			return usagef("--trace and --%s exclude each other: the keys, their sizes and their rates come from the trace", f)
		}
	}
	if fs.Changed("hit-rate") && len(tf.memory) > 0 {
		return usagef("--hit-rate and --memory exclude each other: the miss-ratio curves give the miss ratio")
	}
	tf.hitRate = fs.Changed("hit-rate")
	switch {
	case fs.Changed("rps"):
		return usagef("--trace and --rps exclude each other: the request rate comes from the trace")
	case tf.top < 1:
		return usagef("--top must be at least 1 (got %d)", tf.top)
	case tf.window < 0:
		return usagef("--window must be a positive duration (got %v)", tf.window)
	case tf.sampleKeys < 1:
		return usagef("--sample-keys must be at least 1 (got %d)", tf.sampleKeys)
	case len(tf.memory) == 0 && (fs.Changed("eviction") || fs.Changed("sample-keys") || tf.plotCurve != ""):
		return usagef("--eviction, --sample-keys and --plot-curve shape the miss-ratio curves: give the nodes' memory with --memory")
	}
	if _, err := trace.ParseFormat(tf.format); err != nil {
		return usageError{fmt.Errorf("--trace-format: %w", err)}
	}
	if _, err := mrc.ParsePolicy(tf.eviction); err != nil {
		return usageError{fmt.Errorf("--eviction: %w", err)}
	}
	if _, err := tf.memoryOf(); err != nil {
		return err
	}
	if tf.plotCurve != "" {
		return (&outputFlags{plot: tf.plotCurve}).check()
	}
	return nil
}

// memoryOf reads --memory: SIZE for every node (the key ""), ID=SIZE for
// one.
func (tf *traceFlags) memoryOf() (map[string]float64, error) {
	if len(tf.memory) == 0 {
		return nil, nil
	}
	out := map[string]float64{}
	for _, m := range tf.memory {
		id, size, named := strings.Cut(m, "=")
		if !named {
			id, size = "", m
		}
		v, err := keys.ParseBytes(size)
		if err == nil && !(v > 0) {
			err = errors.New("memory must be more than 0 bytes")
		}
		if err != nil {
			return nil, usagef("--memory %q: %v", m, err)
		}
		if _, dup := out[id]; dup {
			return nil, usagef("--memory gives %q twice", m)
		}
		out[id] = v
	}
	return out, nil
}

// traffic reads the trace and returns the plan's traffic, the memory of
// nodes named by their description's names resolved to their IDs.
func (tf *traceFlags) traffic(cmd *cobra.Command, hist []planStep) (*plan.Traffic, error) {
	var r io.Reader = cmd.InOrStdin()
	name := "stdin"
	if tf.file != "-" {
		f, err := os.Open(tf.file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r, name = f, tf.file
	}
	format, _ := trace.ParseFormat(tf.format)
	tr, err := trace.Open(r, format)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p, err := trace.Summarize(tr, trace.Options{SampleKeys: tf.sampleKeys})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if p.Seconds() <= 0 {
		return nil, fmt.Errorf("%s: its %d requests all bear one time: a plan from traffic needs the trace's timing for request rates", name, p.Requests)
	}
	if tf.hitRate && p.Results() {
		return nil, usagef("--hit-rate: the trace says which reads hit (%d of %d), and gives the miss ratio", p.Hits, p.Hits+p.Misses)
	}
	if w := tf.window.Seconds(); w > p.Seconds() {
		return nil, usagef("--window %v is longer than the trace's span of %v: what comes after the trace is not in it", tf.window, time.Duration(p.Seconds()*1e9).Round(time.Millisecond))
	}
	t := &plan.Traffic{Profile: p, Window: tf.window.Seconds(), TopK: tf.top}
	t.Policy, _ = mrc.ParsePolicy(tf.eviction)
	if t.Memory, err = tf.nodeMemory(hist); err != nil {
		return nil, err
	}
	return t, nil
}

// nodeMemory returns --memory by node ID, each name resolved, every node
// of the plan given memory.
func (tf *traceFlags) nodeMemory(hist []planStep) (map[string]float64, error) {
	mem, _ := tf.memoryOf()
	if mem == nil {
		return nil, nil
	}
	out := map[string]float64{}
	for name, v := range mem {
		id := name
		if name != "" {
			var ok bool
			if id, ok = resolveNode(name, hist); !ok {
				return nil, usagef("--memory %s=...: %q names no node of the plan", name, name)
			}
		}
		out[id] = v
	}
	if _, all := out[""]; !all {
		for _, s := range hist {
			for _, n := range s.p.Nodes() {
				if _, ok := out[n.ID]; !ok {
					return nil, usagef("--memory gives no memory for node %s: give SIZE for every node, or ID=SIZE for each", n.ID)
				}
			}
		}
	}
	return out, nil
}

// curveChart draws the pool's miss ratio against its nodes' mean memory.
func curveChart(r *plan.Result) chart.Chart {
	c := r.Traffic.Curve
	mib := make([]float64, len(c.Memory))
	for i, m := range c.Memory {
		mib[i] = m / (1 << 20)
	}
	return chart.Lines{Title: fmt.Sprintf("%s: the pool's miss ratio, %d -> %d nodes (%s eviction)", r.Label, r.Before, r.After, c.Policy),
		XLabel: "memory per node (MiB, mean)", YLabel: "miss ratio", LogX: true, Percent: true,
		Series: []chart.Series{{Name: "before", X: mib, Y: c.Before}, {Name: "after", X: mib, Y: c.After}}}
}

// trafficChart draws each node's requests per second before and after.
func trafficChart(r *plan.Result) chart.Chart {
	var nodes []string
	var before, after []float64
	for _, n := range r.Traffic.Nodes {
		nodes, before, after = append(nodes, n.Node), append(before, n.RPSBefore), append(after, n.RPSAfter)
	}
	return chart.Bars{Title: fmt.Sprintf("%s: requests per second per node, %d -> %d nodes", r.Label, r.Before, r.After),
		YLabel: "requests per second", Categories: nodes,
		Groups: []chart.Group{{Name: "before", Values: before}, {Name: "after", Values: after}}}
}
