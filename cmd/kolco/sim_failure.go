package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/chart"
	"github.com/kolco-dev/kolco/sim"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/report"
)

// nodesFromFile reads a node file with the shared parser, or returns nil
// when path is empty.
func nodesFromFile(path string) ([]kolco.Node, error) {
	if path == "" {
		return nil, nil
	}
	pf := placementFlags{nodesFile: path}
	return pf.loadNodes()
}

func newSimFailureCmd() *cobra.Command {
	var (
		sf                      setupFlags
		of                      outputFlags
		nodes, cascade, numKeys int
		nodesFile, victim       string
	)
	cmd := &cobra.Command{
		Use:   "failure",
		Short: "Who absorbs a failed node's keys; cascades of failures",
		Long: `Place synthetic keys, then fail the most loaded node (or --victim) and,
with --cascade k, the most loaded survivor after it, k failures in all. For
each failure: the victim's share, the share of keys that moved (ideally just
the victim's), how many survivors received keys, and the worst survivor's
share before and after.

With one point per node a ring hands a failed node's whole arc to one
neighbour, doubling its load; virtual nodes spread it over all survivors.

Example:

  $ kolco sim failure --vnodes 1,100 --cascade 3
  $ kolco sim failure --algo ring,rendezvous,maglev --nodes-file nodes.txt --plot load.svg`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			setups, err := simInputs(cmd.Flags(), &sf, &of, numKeys)
			if err != nil {
				return err
			}
			set, err := nodesFromFile(nodesFile)
			if err != nil {
				return err
			}
			count := nodes
			if set != nil {
				count = len(set)
			}
			if cascade < 1 || cascade >= count {
				return usagef("--cascade must be between 1 and the node count - 1 (got %d for %s)", cascade, report.Count(count, "node", "nodes"))
			}
			res, err := sim.Failure(sim.FailureConfig{Setups: setups, Nodes: nodes, NodeSet: set, Victim: victim,
				Cascade: cascade, Keys: keys.Synthetic(numKeys), Progress: progressTo(cmd.ErrOrStderr())})
			if err != nil {
				return err
			}
			return of.emit(cmd, res, func() chart.Chart { return failureChart(res, cascade) })
		},
	}
	sf.register(cmd.Flags(), defaultVNodes())
	of.register(cmd.Flags())
	countFlag(cmd.Flags(), &nodes, 10, true, "number of nodes \"node-0\", ... (one count, not IDs; your own nodes go in --nodes-file)")
	cmd.Flags().StringVar(&nodesFile, "nodes-file", "", "file of nodes, one per line: ID [WEIGHT [ZONE]]")
	cmd.Flags().StringVar(&victim, "victim", "", "the node to fail first (default: the most loaded)")
	cmd.Flags().IntVar(&cascade, "cascade", 1, "number of failures, one after the other")
	keysFlag(cmd.Flags(), &numKeys, 1_000_000)
	return cmd
}

// failureChart draws each node's share before and after the failures of
// one setup; of several, each setup's share after them, one colour per
// setup (before and after of each would double the bars; the shares
// before are in the table).
func failureChart(r *sim.FailureResult, cascade int) chart.Chart {
	failures := report.Count(cascade, "failure", "failures")
	if len(r.Loads) == 1 {
		l := r.Loads[0]
		return loadsChart(l, fmt.Sprintf("%s: share per node before and after %s", l.Setup, failures))
	}
	c := chart.Bars{Title: "share per node after " + failures, YLabel: "share of keys", Percent: true,
		Categories: r.Loads[0].Nodes}
	for _, l := range r.Loads {
		after := make(map[string]float64, len(l.Nodes))
		for i, n := range l.Nodes {
			after[n] = l.After[i]
		}
		g := chart.Group{Name: l.Setup}
		for _, n := range c.Categories {
			g.Values = append(g.Values, after[n])
		}
		c.Groups = append(c.Groups, g)
	}
	return c
}

// loadsChart draws each node's share before and after a change.
func loadsChart(l sim.NodeLoads, title string) chart.Chart {
	return chart.Bars{Title: title, YLabel: "share of keys", Percent: true, Categories: l.Nodes,
		Groups: []chart.Group{{Name: "before", Values: l.Before}, {Name: "after", Values: l.After}}}
}
