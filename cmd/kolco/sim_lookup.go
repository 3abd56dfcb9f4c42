package main

import (
	"github.com/spf13/cobra"

	"github.com/kolco-dev/kolco/chart"
	"github.com/kolco-dev/kolco/sim"
)

func newSimLookupCmd() *cobra.Command {
	var (
		sf    setupFlags
		of    outputFlags
		nodes string
		keys  int
	)
	cmd := &cobra.Command{
		Use:   "lookup",
		Short: "Time per lookup across node counts (this machine)",
		Long: `Time Locate over --keys synthetic keys on one goroutine for every algorithm
and node count, and the time to build each placement. The figures are this
machine's; the package benchmarks (go test -bench) measure the same with
allocations.

Example:

  $ kolco sim lookup --algo ring,rendezvous,jump,maglev --nodes 10,100,1000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			setups, err := simInputs(cmd.Flags(), &sf, &of, keys)
			if err != nil {
				return err
			}
			ns, err := nodeCounts(nodes)
			if err != nil {
				return err
			}
			res, err := sim.Lookup(sim.LookupConfig{Setups: setups, Nodes: ns, Keys: keys})
			if err != nil {
				return err
			}
			return of.emit(cmd, res, func() chart.Chart { return lookupChart(res) })
		},
	}
	sf.register(cmd.Flags(), defaultVNodes())
	of.register(cmd.Flags())
	cmd.Flags().StringVar(&nodes, "nodes", "10,100,1000", "comma-separated node counts, one run each (counts of made-up nodes, not IDs)")
	keysFlag(cmd.Flags(), &keys, 1_000_000)
	return cmd
}

func lookupChart(r *sim.LookupResult) chart.Chart {
	c := chart.Lines{Title: "time per lookup", XLabel: "nodes", YLabel: "ns per lookup", LogX: true}
	idx := map[string]int{}
	for _, x := range r.Rows {
		i, ok := idx[x.Setup]
		if !ok {
			i = len(c.Series)
			idx[x.Setup] = i
			c.Series = append(c.Series, chart.Series{Name: x.Setup})
		}
		c.Series[i].X = append(c.Series[i].X, float64(x.Nodes))
		c.Series[i].Y = append(c.Series[i].Y, x.Ns)
	}
	return c
}
