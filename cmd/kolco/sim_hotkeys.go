package main

import (
	"cmp"
	"fmt"
	"math"

	"github.com/spf13/cobra"

	"github.com/kolco-dev/kolco/chart"
	"github.com/kolco-dev/kolco/sim"
)

func newSimHotkeysCmd() *cobra.Command {
	var (
		sf                          setupFlags
		of                          outputFlags
		nodes, keys, requests, open int
		zipf, epsilon               float64
		stream                      uint64
	)
	cmd := &cobra.Command{
		Use:   "hotkeys",
		Short: "Per-node request load under a Zipf workload, with and without bounded loads",
		Long: `Replay --requests requests whose keys follow a Zipf law (exponent --zipf over
--keys keys; "key:0" is the hottest), --in-flight of them open at a time, and
report each node's load in requests, not keys: max/avg, spread, the most
requests a node held open at once, and over how many nodes the hottest key
was served.

Every --algo places each request on its key's owner, so the node holding a
hot key carries all of it. The last row is consistent hashing with bounded
loads (Mirrokni, Thorup and Zadimoghaddam, SODA 2018; arXiv 2016), placing
each request live with Acquire and Release: no node holds more than
ceil((1+epsilon) * open requests / N), and a hot key overflows to the next
nodes on the ring.

Example:

  $ kolco sim hotkeys --algo ring,rendezvous --zipf 1.1 --plot hotkeys.svg`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			setups, err := sf.setups(cmd.Flags())
			if err != nil {
				return err
			}
			if err := of.check(); err != nil {
				return err
			}
			if err := cmp.Or(atLeast("nodes", nodes, 1), atLeast("keys", keys, 1), atLeast("requests", requests, 1),
				atLeast("in-flight", open, 1)); err != nil {
				return err
			}
			if !(zipf >= 0) || math.IsInf(zipf, 1) {
				return usagef("--zipf must be a finite number >= 0 (got %v)", zipf)
			}
			if !(epsilon > 0) || math.IsInf(epsilon, 1) {
				return usagef("--epsilon must be a finite number > 0 (got %v)", epsilon)
			}
			res, err := sim.Hotkeys(sim.HotkeysConfig{Setups: setups, Nodes: nodes, Keys: keys, Zipf: zipf,
				Requests: requests, InFlight: open, Epsilon: epsilon, Hash: setups[0].Opts.Hash, Seed: stream,
				Progress: progressTo(cmd.ErrOrStderr())})
			if err != nil {
				return err
			}
			return of.emit(cmd, res, func() chart.Chart { return hotkeysChart(res) })
		},
	}
	sf.register(cmd.Flags(), defaultVNodes())
	of.register(cmd.Flags())
	fs := cmd.Flags()
	countFlag(fs, &nodes, 10, false, "number of nodes (one count of made-up nodes, not IDs)")
	fs.IntVar(&keys, "keys", 10_000, "number of distinct keys")
	fs.Float64Var(&zipf, "zipf", 1.1, "Zipf exponent s: key rank i is requested in proportion to 1/i^s")
	fs.IntVar(&requests, "requests", 1_000_000, "number of requests replayed")
	fs.IntVar(&open, "in-flight", 100, "requests open at a time")
	fs.Float64Var(&epsilon, "epsilon", 0.25, "bounded loads' slack: capacity ceil((1+eps) * open / N)")
	fs.Uint64Var(&stream, "stream-seed", 1, "seed of the request stream")
	return cmd
}

// hotkeysChart draws each node's share of the requests, one colour per placement.
func hotkeysChart(r *sim.HotkeysResult) chart.Chart {
	c := chart.Bars{Title: fmt.Sprintf("requests per node, Zipf s=%g, hottest key %.1f%%", r.Zipf, r.HotShare*100),
		YLabel: "share of requests", Percent: true, Categories: r.Loads[0].Nodes}
	for _, l := range r.Loads {
		c.Groups = append(c.Groups, chart.Group{Name: l.Setup, Values: l.Shares})
	}
	return c
}
