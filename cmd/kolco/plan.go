package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kolco-dev/kolco/chart"
	"github.com/kolco-dev/kolco/sim"
	"github.com/kolco-dev/kolco/sim/plan"
	"github.com/kolco-dev/kolco/sim/report"
)

// planFlags are kolco plan's own flags; the node set, the algorithm and
// --add/--remove come from placementFlags, another system's description
// from compatFlags.
type planFlags struct {
	reweight        []string
	to              []string
	moves           string
	keysFile        string
	keysFrom        []string
	keysFromServers bool
	keys            int
	size, sizeDist  string
	rateDist, data  string
	rps, hitRate    float64
	warm            bool
	down            []string
	redis           bool    // the servers are Redis: read with SCAN and MEMORY USAGE
	redisDB         int     // the database SELECTed on them
	moveRate        float64 // a store mover's keys a second per server
	moveRateFrom    string  // a proxy's admin endpoint whose last_move gives it
	tr              traceFlags
}

// defaultMoveRate is the rate --redis plans a store's move at unless
// --move-rate says otherwise: kolco proxy's mover has no ceiling by
// default (store.rate 0) and goes at the pace the clients' latency
// allows, which a plan made before the move cannot know; this is a
// cautious figure for it.
const defaultMoveRate = 5000

func newPlanCmd() *cobra.Command {
	var (
		pf placementFlags
		cf compatFlags
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
  - with --rps and --hit-rate, the article's cost model for a cache
    tier: right after the change every request to a moved key misses, so
    the database sees rps*cold + rps*(1-cold)*(1-hit) instead of
    rps*(1-hit); with --warm also the change applied warm, as kolco proxy
    applies it: for a migration window a read that misses on a key's new
    owner reads its previous owner, so only keys of servers that are down
    then (--down) miss.

The article's examples, 10 -> 11 nodes:

  $ seq -f 'node-%g' 0 9 > ten.txt
  $ kolco plan --algo modulo --nodes-file ten.txt --add node-10 --rps 100000 --hit-rate 0.95
  $ kolco plan --algo ring --nodes-file ten.txt --add node-10 --rps 100000 --hit-rate 0.95
  $ kolco plan --nodes-file ten.txt --add node-10 --data 3TB

The "theory" column gives the article's figures (91 364 RPS, 18.3x for
modulo; 13 636 RPS, 2.7x and 273 GB, 27 GB per old node for a ring); the
"measured" column is the same model on the key sample.

The real change of another system: --algo twemproxy, libmemcached, nginx,
haproxy, redis, goredis, pymemcache, cassandra or envoy, its description
before as kolco locate takes it (--config FILE with --pool, --upstream or
--backend for a file of several; or --servers LIST), and after with --to, a
file or a list in the same form. Keys are placed exactly as that system
places them; where its servers hold keys by address (memcached behind
twemproxy, nginx, HAProxy and the clients), nodes are named by address.

  $ kolco plan --algo twemproxy --config nutcracker.yml --pool alpha --to nutcracker.new.yml
  $ kolco plan --algo libmemcached --distribution ketama_weighted \
        --servers 10.0.0.1:11211,10.0.0.2:11211 --to 10.0.0.1:11211,10.0.0.2:11211,10.0.0.3:11211
  $ kolco plan --algo haproxy --config haproxy.cfg --backend cache --to haproxy.new.cfg

--to also takes kolco's own nodes after the change, a node file with
--nodes-file or a list with --nodes, in place of --add, --remove and
--reweight. Given more than once, it plans a history, each version after
the one before, and counts the keys that move back to a server holding an
old copy of them, which a read would then find stale:

  $ kolco plan --algo twemproxy --config v1.yml --to v2.yml --to v1.yml

The key sample is a file (--keys-file, one "KEY [SIZE [RATE]]" per line;
SIZE like 512, 4KB or 1.5GiB), the keys running memcached servers hold
(--keys-from HOST:PORT,... or, for the servers of the placement before,
--keys-from-servers; each key with its item's size, read with
"lru_crawler metadump all"), or --keys synthetic keys with sizes drawn from
--size-dist around --size and rates from --rate-dist. --data scales the sizes
so the sample stands for that many bytes in all.

A Redis store (kolco proxy's store pools move their keys on a change): with
--redis, --keys-from and --keys-from-servers list each server's keys with
SCAN and their bytes with MEMORY USAGE (AUTH with $REDISCLI_AUTH, as
redis-cli; --redis-db to SELECT), and the plan adds how long the move takes
at --move-rate keys a second from each server (5000 unless given; a
store.rate ceiling), or at the pace a running proxy's last move measured
(--move-rate-from ADDR, its admin endpoint; last_move's
server_keys_per_second of --pool, or of its only pool):

  $ kolco plan --algo ring --nodes redis-1:6379,redis-2:6379,redis-3:6379,redis-4:6379 \
        --add redis-5:6379 --redis --keys-from-servers --move-rate-from 127.0.0.1:22223

From traffic: --trace FILE plans with the keys a trace requests, each
weighed by its requests per second rather than counted once: redis-cli
MONITOR output, memcached's "watch fetchers mutations" stream, a Twitter
cache-trace CSV or kolco's own trace (docs/trace.md; --trace-format names
the format when the first lines do not tell). Beside the keys and bytes
that move it reports the moved keys' requests and reads per second, the
database's reads right after the change, the misses the change adds
within spans after it (up to --window, at most the trace's span, the
caches taken to hold what the trace read), and each node's requests per
second and hottest keys after it (--top). With each cache node's memory
(--memory 64MiB, or ID=SIZE for each), it draws each node's miss-ratio
curve from a SHARDS sample of the trace (Waldspurger et al., FAST 2015;
at most --sample-keys keys), replaying memcached's segmented LRU and slab
chunks (--eviction lru for plain LRU), and adds the steady misses the
change's new shares of memory cost or save; --plot-curve draws the pool's
curve before and after. --plot draws each node's requests per second. For
a store, --move-rate (or --redis) adds the time its move takes.

  $ redis-cli monitor > monitor.txt     # a few minutes of traffic, then ^C
  $ kolco plan --nodes-file ten.txt --add node-10 --trace monitor.txt
  $ kolco plan --algo twemproxy --config nutcracker.yml --pool alpha --to new.yml \
        --trace watch.log --memory 4GiB --plot-curve mrc.svg

--moves FILE (- for stdout, in place of the tables) lists every key that
moves: "KEY<TAB>FROM<TAB>TO", and in a history two more columns, the step
(1 for the change into the first --to) and "stale" when the key returns to
a server that held it before, else "-".

  $ kolco plan --algo twemproxy --config old.yml --to new.yml \
        --keys-from-servers --moves moves.tsv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := lf.config(cmd.Flags())
			if err != nil {
				return err
			}
			if lf.moveRateFrom != "" {
				if cfg.MoveRate, err = measuredMoveRate(lf.moveRateFrom, cf.pool); err != nil {
					return err
				}
			}
			if err := lf.checkOutput(&of); err != nil {
				return err
			}
			src, err := lf.source(&pf, &cf, cmd.Flags())
			if err != nil {
				return err
			}
			hist, err := src.placements()
			if err != nil {
				return err
			}
			cfg.Label, cfg.Theory = src.label, src.theory
			if cfg.Down, err = resolveDown(lf.down, hist); err != nil {
				return err
			}
			if lf.tr.file != "" {
				cfg.Traffic, err = lf.tr.traffic(cmd, hist)
			} else {
				cfg.Keys, err = lf.keySet(cmd.Context(), hist[0])
			}
			if err != nil {
				return err
			}
			return lf.run(cmd, cfg, hist, &of)
		},
	}
	pf.register(cmd.Flags())
	cf.register(cmd.Flags())
	of.register(cmd.Flags())
	cmd.Flags().Lookup("algo").Usage = "placement algorithm or system to reproduce: " + algoList()
	fs := cmd.Flags()
	fs.StringSliceVar(&lf.reweight, "reweight", nil, "set node weights: ID=W (comma-separated or repeated)")
	fs.StringArrayVar(&lf.to, "to", nil, "the description after the change, in the form of the one before (a file or a list); repeat for a history")
	fs.StringVar(&lf.moves, "moves", "", "write every moved key to FILE (- for stdout): KEY<TAB>FROM<TAB>TO")
	fs.StringVar(&lf.keysFile, "keys-file", "", "key sample: one \"KEY [SIZE [RATE]]\" per line")
	fs.StringSliceVar(&lf.keysFrom, "keys-from", nil, "key sample: the keys the memcached (or, with --redis, Redis) servers HOST:PORT,... hold, with their sizes")
	fs.BoolVar(&lf.keysFromServers, "keys-from-servers", false, "key sample: the keys the servers of the placement before hold (memcached, or Redis with --redis)")
	fs.BoolVar(&lf.redis, "redis", false, "the servers are a Redis store: keys read with SCAN and MEMORY USAGE, and the time its move takes (AUTH from $REDISCLI_AUTH)")
	fs.IntVar(&lf.redisDB, "redis-db", 0, "with --redis: the database to read (SELECT)")
	fs.StringVar(&lf.moveRateFrom, "move-rate-from", "", "a running kolco proxy's admin endpoint, host:port: plan the store's move at the pace its last move measured (last_move's server_keys_per_second, of --pool or its only pool)")
	fs.Float64Var(&lf.moveRate, "move-rate", 0, "keys a second a store's mover sends from each server, as kolco proxy's store.rate: adds the time the move takes (5000 with --redis)")
	fs.IntVar(&lf.keys, "keys", 1_000_000, "synthetic keys \"key:0\", ... when the sample is not read")
	fs.StringVar(&lf.size, "size", "1KB", "mean size of a synthetic key")
	fs.StringVar(&lf.sizeDist, "size-dist", "const", "synthetic sizes: const, exp or pareto:A")
	fs.StringVar(&lf.rateDist, "rate-dist", "const", "synthetic request rates: const or zipf:S")
	fs.StringVar(&lf.data, "data", "", "total stored bytes the sample stands for, e.g. 3TB")
	fs.Float64Var(&lf.rps, "rps", 0, "requests per second to the cache tier (enables the database model)")
	fs.Float64Var(&lf.hitRate, "hit-rate", 0.95, "steady cache hit rate, 0..1")
	fs.BoolVar(&lf.warm, "warm", false, "also the database's load with the change applied warm (needs --rps)")
	fs.StringSliceVar(&lf.down, "down", nil, "with --warm: nodes that do not answer during the migration window")
	lf.tr.register(fs)
	return cmd
}

// run computes the plan of hist, one change or a history, and writes it.
func (lf *planFlags) run(cmd *cobra.Command, cfg plan.Config, hist []planStep, of *outputFlags) error {
	cfg.ListMoves = lf.moves != ""
	ps := placementsOf(hist)
	if len(ps) == 2 {
		cfg.Before, cfg.After = ps[0], ps[1]
		res, err := plan.Compute(cfg)
		if err != nil {
			return err
		}
		if err := lf.writeMoves(cmd, []*plan.Result{res}, false); err != nil || lf.moves == "-" {
			return err
		}
		if lf.tr.plotCurve != "" {
			if err := chart.Save(lf.tr.plotCurve, curveChart(res)); err != nil {
				return fmt.Errorf("--plot-curve: %w", err)
			}
		}
		draw := func() chart.Chart { return planChart(res) }
		if res.Traffic != nil {
			draw = func() chart.Chart { return trafficChart(res) }
		}
		return of.emit(cmd, res, draw)
	}
	h, err := plan.ComputeHistory(cfg, ps)
	if err != nil {
		return err
	}
	if err := lf.writeMoves(cmd, h.Steps, true); err != nil || lf.moves == "-" {
		return err
	}
	return of.emit(cmd, h, nil)
}

// checkOutput validates the output flags before any work is done.
func (lf *planFlags) checkOutput(of *outputFlags) error {
	if err := of.check(); err != nil {
		return err
	}
	switch {
	case len(lf.to) > 1 && of.plot != "":
		return usagef("--plot draws one change; a history of %d changes has no chart", len(lf.to))
	case len(lf.to) > 1 && lf.tr.plotCurve != "":
		return usagef("--plot-curve draws one change; a history of %d changes has no chart", len(lf.to))
	case lf.moves == "-" && (of.asJSON || of.asCSV || of.plot != "" || lf.tr.plotCurve != ""):
		return usagef("--moves - writes the moved keys on stdout in place of the report: it excludes --json, --csv, --plot and --plot-curve")
	}
	return nil
}

// planChart draws each node's share of the keys before and after.
func planChart(r *plan.Result) chart.Chart {
	l := sim.NodeLoads{Setup: r.Label}
	for _, x := range r.Loads {
		l.Nodes = append(l.Nodes, x.Node)
		l.Before = append(l.Before, float64(x.KeysBefore)/float64(r.Keys))
		l.After = append(l.After, float64(x.KeysAfter)/float64(r.Keys))
	}
	return loadsChart(l, fmt.Sprintf("%s: share of keys per node, %d -> %s", r.Label, r.Before, report.Count(r.After, "node", "nodes")))
}
