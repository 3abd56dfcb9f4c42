package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/chart"
	"github.com/kolco-dev/kolco/sim"
	"github.com/kolco-dev/kolco/sim/keys"
)

func newSimWeightsCmd() *cobra.Command {
	var (
		sf        setupFlags
		of        outputFlags
		numKeys   int
		nodesFile string
	)
	cmd := &cobra.Command{
		Use:   "weights",
		Short: "Requested against obtained shares of weighted nodes",
		Long: `Place synthetic keys on weighted nodes and compare each node's share with
the share its weight requests (weight / total weight). The nodes come from
--nodes-file ("ID [WEIGHT [ZONE]]" per line); by default the article's
small-1, small-2 and big (weight 2).

Algorithms that take no weights (jump, jumpback, jumpbackanchor, flip,
binomial, power, anchor) are left out of the run, with a line on stderr
saying so and their names under "skipped" in --json; a run of none but
them is refused.

Example:

  $ kolco sim weights --algo ring,rendezvous,maglev --vnodes 100,1000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			setups, err := simInputs(cmd.Flags(), &sf, &of, numKeys)
			if err != nil {
				return err
			}
			nodes, err := nodesFromFile(nodesFile)
			if err != nil {
				return err
			}
			if nodes == nil {
				nodes = []kolco.Node{{ID: "small-1"}, {ID: "small-2"}, {ID: "big", Weight: 2}}
			}
			if err := takeWeights(setups, nodes); err != nil {
				return err
			}
			res, err := sim.Weights(sim.WeightsConfig{Setups: setups, Nodes: nodes, Keys: keys.Synthetic(numKeys)})
			if err != nil {
				return err
			}
			if len(res.Skipped) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "kolco: sim weights: left out --algo %s: %s no weights (every node weighs 1)\n",
					strings.Join(res.Skipped, ","), takeOrTakes(len(res.Skipped)))
			}
			return of.emit(cmd, res, func() chart.Chart { return weightsChart(res) })
		},
	}
	sf.register(cmd.Flags(), defaultVNodes())
	of.register(cmd.Flags())
	cmd.Flags().StringVar(&nodesFile, "nodes-file", "", "file of weighted nodes, one per line: ID [WEIGHT [ZONE]]")
	keysFlag(cmd.Flags(), &numKeys, 1_000_000)
	return cmd
}

// takeWeights refuses, as a usage error naming --algo, a run in which no
// algorithm takes weighted nodes: the experiment is about weights, so the
// fix is another algorithm, not other nodes. A run in which some do runs
// those and leaves the others out (sim.Weights lists them).
func takeWeights(setups []sim.Setup, nodes []kolco.Node) error {
	var refused []string
	for _, s := range setups {
		if _, err := s.New(nodes); errors.Is(err, kolco.ErrBadWeight) {
			refused = append(refused, s.Algo)
		} else if err != nil {
			return err
		}
	}
	if len(refused) < len(setups) {
		return nil
	}
	return usagef("--algo %s: %s no weights (every node weighs 1), so there are no weighted shares to compare; "+
		"choose algorithms that take weights, such as ring, rendezvous, maglev or dx", strings.Join(refused, ","), takeOrTakes(len(refused)))
}

// takeOrTakes is "it takes" for one algorithm and "they take" for more.
func takeOrTakes(n int) string {
	if n == 1 {
		return "it takes"
	}
	return "they take"
}

// weightsChart draws requested and obtained shares of every node of every setup.
func weightsChart(r *sim.WeightsResult) chart.Chart {
	c := chart.Bars{Title: "weights: requested and obtained share", YLabel: "share of keys", Percent: true}
	req, got := chart.Group{Name: "requested"}, chart.Group{Name: "obtained"}
	for _, x := range r.Rows {
		c.Categories = append(c.Categories, x.Setup+" "+x.Node)
		req.Values, got.Values = append(req.Values, x.Requested), append(got.Values, x.Obtained)
	}
	c.Groups = []chart.Group{req, got}
	return c
}
