package main

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/kolco-dev/kolco/chart"
	"github.com/kolco-dev/kolco/sim"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/report"
)

func newSimBalanceCmd() *cobra.Command {
	var (
		sf            setupFlags
		of            outputFlags
		nodes         string
		numKeys, sets int
	)
	cmd := &cobra.Command{
		Use:   "balance",
		Short: "How evenly keys spread, against V or the node count, with the theory",
		Long: `Place synthetic keys on equal nodes and report the largest and smallest
key count over the mean (max/avg, min/avg) and the spread (standard deviation
over the mean), averaged over --sets node name sets, for every algorithm,
vnode count and node count given.

Theory: a ring's arcs have spread sqrt((N-1)/(N*V+1)) (a node's share of the
circle is Beta(V, (N-1)V)); counting K keys adds the sampling noise
sqrt((N-1)/K), the only unevenness of a perfectly balanced algorithm. With
one point per node the largest arc is H_N = 1 + 1/2 + ... + 1/N times the mean.

Example:

  $ kolco sim balance --vnodes 1,10,100,1000 --sets 10 --plot spread-vs-vnodes.svg
  $ kolco sim balance --algo ring,rendezvous,maglev,jump --nodes 10,100`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			setups, err := simInputs(cmd.Flags(), &sf, &of, numKeys)
			if err != nil {
				return err
			}
			ns, err := nodeCounts(nodes)
			if err != nil {
				return err
			}
			if sets < 1 {
				return usagef("--sets must be at least 1 (got %d)", sets)
			}
			res, err := sim.Balance(sim.BalanceConfig{Setups: setups, Nodes: ns, Keys: keys.Synthetic(numKeys),
				Sets: sets, Progress: progressTo(cmd.ErrOrStderr())})
			if err != nil {
				return err
			}
			return of.emit(cmd, res, func() chart.Chart { return balanceChart(res) })
		},
	}
	sf.register(cmd.Flags(), defaultVNodes())
	of.register(cmd.Flags())
	cmd.Flags().StringVar(&nodes, "nodes", "10", "comma-separated node counts, one run each (counts of made-up nodes, not IDs)")
	keysFlag(cmd.Flags(), &numKeys, 1_000_000)
	cmd.Flags().IntVar(&sets, "sets", 1, "node name sets to average over")
	return cmd
}

// balanceChart draws the spread against V with the theory's curve when
// rings of several vnode counts were measured, else against the node count
// when several were given, else the setups side by side.
func balanceChart(r *sim.BalanceResult) chart.Chart {
	byV := map[int]bool{}
	byN := map[int]bool{}
	for _, x := range r.Rows {
		if x.Algo == "ring" {
			byV[x.VNodes] = true
		}
		byN[x.Nodes] = true
	}
	if len(byV) > 1 {
		return spreadVsV(r)
	}
	if len(byN) > 1 {
		c := chart.Lines{Title: fmt.Sprintf("spread of keys per node, %s", report.Count(r.Keys, "key", "keys")), XLabel: "nodes", YLabel: "spread (stdev / mean)", LogX: true, Percent: true}
		idx := map[string]int{}
		for _, x := range r.Rows {
			i, ok := idx[x.Setup]
			if !ok {
				i = len(c.Series)
				idx[x.Setup] = i
				c.Series = append(c.Series, chart.Series{Name: x.Setup})
			}
			c.Series[i].X = append(c.Series[i].X, float64(x.Nodes))
			c.Series[i].Y = append(c.Series[i].Y, x.Spread)
		}
		return c
	}
	c := chart.Bars{Title: fmt.Sprintf("balance, %s", report.Count(r.Keys, "key", "keys")), YLabel: "spread (stdev / mean)", Percent: true}
	m, th := chart.Group{Name: "measured"}, chart.Group{Name: "theory"}
	for _, x := range r.Rows {
		c.Categories = append(c.Categories, fmt.Sprintf("%s N=%d", x.Setup, x.Nodes))
		m.Values, th.Values = append(m.Values, x.Spread), append(th.Values, x.TheorySpread)
	}
	c.Groups = []chart.Group{m, th}
	return c
}

// spreadVsV draws, for each node count, the ring's measured spread
// against V, the theory of arcs plus sampling, and the other algorithms
// as flat lines; with several node counts each line's name says its
// count.
func spreadVsV(r *sim.BalanceResult) chart.Chart {
	var counts []int
	for _, x := range r.Rows {
		if !slices.Contains(counts, x.Nodes) {
			counts = append(counts, x.Nodes)
		}
	}
	title := fmt.Sprintf("spread of keys per node, %s, %s", report.Count(counts[0], "node", "nodes"), report.Count(r.Keys, "key", "keys"))
	if len(counts) > 1 {
		title = fmt.Sprintf("spread of keys per node, %s", report.Count(r.Keys, "key", "keys"))
	}
	c := chart.Lines{Title: title, XLabel: "virtual nodes per node (V)", YLabel: "spread (stdev / mean)", LogX: true, Percent: true}
	var theories []chart.Series
	for _, n := range counts {
		name := func(one, several string) string {
			if len(counts) == 1 {
				return one
			}
			return fmt.Sprintf("%s, N=%d", several, n)
		}
		ring := chart.Series{Name: name("ring, measured", "ring")}
		theory := chart.Series{Name: name("theory sqrt((N-1)/(NV+1)) with sampling", "theory"), Theory: true}
		var others []sim.BalanceStat
		for _, x := range r.Rows {
			switch {
			case x.Nodes != n:
			case x.Algo == "ring":
				ring.X, ring.Y = append(ring.X, float64(x.VNodes)), append(ring.Y, x.Spread)
				theory.X, theory.Y = append(theory.X, float64(x.VNodes)), append(theory.Y, x.TheorySpread)
			default:
				others = append(others, x)
			}
		}
		c.Series = append(c.Series, ring)
		for _, x := range others {
			c.Series = append(c.Series, chart.Series{Name: name(x.Setup, x.Setup), X: []float64{ring.X[0], ring.X[len(ring.X)-1]}, Y: []float64{x.Spread, x.Spread}})
		}
		theories = append(theories, theory)
	}
	c.Series = append(c.Series, theories...)
	return c
}
