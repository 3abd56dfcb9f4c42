package main

import (
	"errors"

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
			return of.emit(cmd, res, func() chart.Chart { return weightsChart(res) })
		},
	}
	sf.register(cmd.Flags(), defaultVNodes())
	of.register(cmd.Flags())
	cmd.Flags().StringVar(&nodesFile, "nodes-file", "", "file of weighted nodes, one per line: ID [WEIGHT [ZONE]]")
	keysFlag(cmd.Flags(), &numKeys, 1_000_000)
	return cmd
}

// takeWeights refuses, as a usage error naming --algo, an algorithm that
// refuses weighted nodes: the experiment is about weights, so the fix is
// another algorithm, not other nodes.
func takeWeights(setups []sim.Setup, nodes []kolco.Node) error {
	for _, s := range setups {
		if _, err := s.New(nodes); errors.Is(err, kolco.ErrBadWeight) {
			return usagef("--algo %s: it takes no weights (every node weighs 1), so there are no weighted shares to compare; "+
				"choose algorithms that take weights, such as ring, rendezvous or maglev", s.Algo)
		}
	}
	return nil
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
