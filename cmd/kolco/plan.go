package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/chart"
	"github.com/kolco-dev/kolco/sim"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/plan"
	"github.com/kolco-dev/kolco/sim/theory"
	"github.com/kolco-dev/kolco/sim/workload"
)

// planFlags are kolco plan's own flags; the node set, the algorithm and
// --add/--remove come from placementFlags.
type planFlags struct {
	reweight       []string
	keysFile       string
	keys           int
	size, sizeDist string
	rateDist, data string
	rps, hitRate   float64
}

func newPlanCmd() *cobra.Command {
	var (
		pf placementFlags
		lf planFlags
		of outputFlags
	)
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "What adding, removing or re-weighting nodes will cost",
		Long: `Plan a change of membership: from the current nodes (--nodes or
--nodes-file) and a change (--add, --remove, --reweight ID=W, applied in that
order), place a key sample before and after and report:

  - keys, bytes and requests that move, with the theory's share beside them:
    the least any placement can move given the weights (k/(N+k) when k
    nodes join N equal ones, k/N when k leave), or modulo's
    1 - min(N,M)/lcm(N,M), N/(N+1) for one added node;
  - every donor -> receiver flow: keys, bytes, share of requests;
  - per node: keys, bytes and request share before and after, bytes sent
    and received;
  - with --rps and --hit-rate, the seed article's cost model for a cache
    tier: right after the change every request to a moved key misses, so
    the database sees rps*cold + rps*(1-cold)*(1-hit) instead of
    rps*(1-hit).

The key sample is a file (--keys-file, one "KEY [SIZE [RATE]]" per line;
SIZE like 512, 4KB or 1.5GiB) or --keys synthetic keys with sizes drawn from
--size-dist around --size and rates from --rate-dist. --data scales the sizes
so the sample stands for that many bytes in all.

The article's examples, 10 -> 11 nodes:

  $ seq -f 'node-%g' 0 9 > ten.txt
  $ kolco plan --algo modulo --nodes-file ten.txt --add node-10 --rps 100000 --hit-rate 0.95
  $ kolco plan --algo ring --nodes-file ten.txt --add node-10 --rps 100000 --hit-rate 0.95
  $ kolco plan --nodes-file ten.txt --add node-10 --data 3TB

The "theory" column gives the article's figures (91 364 RPS, 18.3x for
modulo; 13 636 RPS, 2.7x and 273 GB, 27 GB per old node for a ring); the
"measured" column is the same model on the key sample.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, ch, err := lf.config(&pf, cmd)
			if err != nil {
				return err
			}
			if err := of.check(); err != nil {
				return err
			}
			if cfg.Before, cfg.After, err = ch.placements(); err != nil {
				return err
			}
			res, err := plan.Compute(cfg)
			if err != nil {
				return err
			}
			return of.emit(cmd, res, func() chart.Chart { return planChart(res) })
		},
	}
	pf.register(cmd.Flags())
	of.register(cmd.Flags())
	fs := cmd.Flags()
	fs.StringSliceVar(&lf.reweight, "reweight", nil, "set node weights: ID=W (comma-separated or repeated)")
	fs.StringVar(&lf.keysFile, "keys-file", "", "key sample: one \"KEY [SIZE [RATE]]\" per line")
	fs.IntVar(&lf.keys, "keys", 1_000_000, "synthetic keys \"key:0\", ... when no --keys-file")
	fs.StringVar(&lf.size, "size", "1KB", "mean size of a synthetic key")
	fs.StringVar(&lf.sizeDist, "size-dist", "const", "synthetic sizes: const, exp or pareto:A")
	fs.StringVar(&lf.rateDist, "rate-dist", "const", "synthetic request rates: const or zipf:S")
	fs.StringVar(&lf.data, "data", "", "total stored bytes the sample stands for, e.g. 3TB")
	fs.Float64Var(&lf.rps, "rps", 0, "requests per second to the cache tier (enables the database model)")
	fs.Float64Var(&lf.hitRate, "hit-rate", 0.95, "steady cache hit rate, 0..1")
	return cmd
}

// planChange is the change the flags describe: an algorithm, its nodes, and
// the nodes that join, leave and change weight, in that order.
type planChange struct {
	setup    sim.Setup
	nodes    []kolco.Node
	add      []kolco.Node
	remove   []string
	reweight []planReweight
}

// planReweight is one --reweight ID=W.
type planReweight struct {
	id     string
	weight float64
}

// config turns the flags into a plan and the change it measures, reading
// the node and key files.
func (lf *planFlags) config(pf *placementFlags, cmd *cobra.Command) (plan.Config, planChange, error) {
	var (
		cfg plan.Config
		ch  planChange
	)
	opts, err := pf.options(cmd.Flags())
	if err != nil {
		return cfg, ch, err
	}
	ch.setup = sim.Setup{Algo: strings.ToLower(pf.algo), Opts: opts}
	cfg.Label = ch.setup.Label()
	if ch.setup.Algo == "modulo" {
		cfg.Theory = func(before, after []kolco.Node) float64 { return theory.ModuloMoved(len(before), len(after)) }
	}
	if ch.nodes, err = pf.loadNodes(); err != nil {
		return cfg, ch, err
	}
	for _, id := range splitIDs(pf.add) {
		ch.add = append(ch.add, kolco.Node{ID: id})
	}
	ch.remove = splitIDs(pf.remove)
	for _, rw := range lf.reweight {
		id, w, ok := strings.Cut(rw, "=")
		v, err := strconv.ParseFloat(w, 64)
		if !ok || id == "" || err != nil {
			return cfg, ch, usagef("--reweight %q: want ID=WEIGHT", rw)
		}
		ch.reweight = append(ch.reweight, planReweight{id, v})
	}
	if len(ch.add)+len(ch.remove)+len(ch.reweight) == 0 {
		return cfg, ch, usagef("no change: give --add, --remove or --reweight")
	}
	if lf.rps < 0 || lf.hitRate < 0 || lf.hitRate > 1 {
		return cfg, ch, usagef("--rps must be >= 0 and --hit-rate in [0, 1]")
	}
	cfg.RPS, cfg.HitRate = lf.rps, lf.hitRate
	if lf.data != "" {
		if cfg.Data, err = keys.ParseBytes(lf.data); err != nil {
			return cfg, ch, usageError{fmt.Errorf("--data: %w", err)}
		}
	}
	cfg.Keys, err = lf.keySet()
	return cfg, ch, err
}

// placements builds the placement before the change and, from the same
// nodes, the one after it, the change applied as a running system applies
// it: the nodes added, then removed, then reweighted.
func (c planChange) placements() (before, after algo.Placement, err error) {
	if before, err = c.setup.New(c.nodes); err != nil {
		return nil, nil, err
	}
	if after, err = c.setup.New(c.nodes); err != nil {
		return nil, nil, err
	}
	if len(c.add) > 0 {
		if err := after.Add(c.add...); err != nil {
			return nil, nil, fmt.Errorf("add: %w", err)
		}
	}
	if len(c.remove) > 0 {
		if err := after.Remove(c.remove...); err != nil {
			return nil, nil, fmt.Errorf("remove: %w", err)
		}
	}
	for _, r := range c.reweight {
		if err := after.Reweight(r.id, r.weight); err != nil {
			return nil, nil, fmt.Errorf("reweight: %w", err)
		}
	}
	return before, after, nil
}

// keySet reads --keys-file or draws the synthetic sample.
func (lf *planFlags) keySet() (*keys.Set, error) {
	if lf.keysFile != "" {
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
	}
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

// planChart draws each node's share of the keys before and after.
func planChart(r *plan.Result) chart.Chart {
	l := sim.NodeLoads{Setup: r.Label}
	for _, x := range r.Loads {
		l.Nodes = append(l.Nodes, x.Node)
		l.Before = append(l.Before, float64(x.KeysBefore)/float64(r.Keys))
		l.After = append(l.After, float64(x.KeysAfter)/float64(r.Keys))
	}
	return loadsChart(l, fmt.Sprintf("%s: share of keys per node, %d -> %d nodes", r.Label, r.Before, r.After))
}
