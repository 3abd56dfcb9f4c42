package main

import (
	"cmp"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kolco-dev/kolco/chart"
	"github.com/kolco-dev/kolco/sim"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/report"
)

func newSimRemapCmd() *cobra.Command {
	var (
		sf                 setupFlags
		of                 outputFlags
		nodes, add, remove int
		numKeys, sets      int
	)
	cmd := &cobra.Command{
		Use:   "remap",
		Short: "Keys moved when nodes join or leave, against the theory",
		Long: `Place synthetic keys on --nodes equal nodes, add --add nodes (or remove the
last --remove), place them again, and report the share of keys that moved
(min/avg/max over --sets node name sets), the share that went to the new
nodes, how many old nodes gave keys away, and the balance afterwards.

The theory column is the least any placement can move: k/(N+k) when k nodes
join N, k/N when k leave; for modulo it is 1 - min(N,M)/lcm(N,M), which is
N/(N+1) for one added node.

Example:

  $ kolco sim remap --algo ring,rendezvous,jump,modulo --nodes 10 --add 1 --keys 1000000
  $ kolco sim remap --vnodes 1,10,100,1000 --sets 10 --plot moved-vs-vnodes.svg`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			setups, err := simInputs(cmd.Flags(), &sf, &of, numKeys)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("remove") && !cmd.Flags().Changed("add") {
				add = 0
			}
			if err := cmp.Or(atLeast("nodes", nodes, 1), atLeast("sets", sets, 1), atLeast("add", add, 0), atLeast("remove", remove, 0)); err != nil {
				return err
			}
			switch {
			case remove >= nodes:
				return usagef("--remove %d takes away every node of --nodes %d: remove fewer", remove, nodes)
			case add+remove == 0:
				return usagef("no change to measure: give --add k or --remove k")
			}
			res, err := sim.Remap(sim.RemapConfig{Setups: setups, Nodes: nodes, Add: add, Remove: remove,
				Keys: keys.Synthetic(numKeys), Sets: sets, Progress: progressTo(cmd.ErrOrStderr())})
			if err != nil {
				return err
			}
			return of.emit(cmd, res, func() chart.Chart { return remapChart(res) })
		},
	}
	sf.register(cmd.Flags(), defaultVNodes())
	of.register(cmd.Flags())
	countFlag(cmd.Flags(), &nodes, 10, false, "number of nodes before the change (one count of made-up nodes, not IDs)")
	cmd.Flags().IntVar(&add, "add", 1, "nodes to add")
	cmd.Flags().IntVar(&remove, "remove", 0, "nodes to remove, the last by name (then --add defaults to 0)")
	keysFlag(cmd.Flags(), &numKeys, 1_000_000)
	cmd.Flags().IntVar(&sets, "sets", 1, "node name sets to average over")
	return cmd
}

// remapChart draws the moved share against V when rings of several vnode
// counts were measured, else the setups side by side.
func remapChart(r *sim.RemapResult) chart.Chart {
	title := fmt.Sprintf("keys moved, %d -> %s", r.Nodes, report.Count(r.Nodes+r.Add-r.Remove, "node", "nodes"))
	var ringV, moved, lo, hi, theory []float64
	for _, x := range r.Rows {
		if x.Algo == "ring" {
			ringV = append(ringV, float64(x.VNodes))
			moved, lo, hi = append(moved, x.AvgMoved), append(lo, x.MinMoved), append(hi, x.MaxMoved)
			theory = append(theory, x.Theory)
		}
	}
	if len(ringV) > 1 {
		c := chart.Lines{Title: title, XLabel: "virtual nodes per node (V)", YLabel: "keys moved", LogX: true, Percent: true,
			Series: []chart.Series{{Name: "ring, mean", X: ringV, Y: moved}}}
		if r.Sets > 1 {
			title += fmt.Sprintf(", %d node name sets", r.Sets)
			c.Title = title
			c.Series = append(c.Series, chart.Series{Name: "ring, max", X: ringV, Y: hi}, chart.Series{Name: "ring, min", X: ringV, Y: lo})
		}
		for _, x := range r.Rows {
			if x.Algo != "ring" {
				c.Series = append(c.Series, chart.Series{Name: x.Setup, X: []float64{ringV[0], ringV[len(ringV)-1]}, Y: []float64{x.AvgMoved, x.AvgMoved}})
			}
		}
		c.Series = append(c.Series, chart.Series{Name: "theory", X: ringV, Y: theory, Theory: true})
		return c
	}
	c := chart.Bars{Title: title, YLabel: "keys moved", Percent: true}
	measured, th := chart.Group{Name: "measured (avg)"}, chart.Group{Name: "theory"}
	for _, x := range r.Rows {
		c.Categories = append(c.Categories, x.Setup)
		measured.Values = append(measured.Values, x.AvgMoved)
		th.Values = append(th.Values, x.Theory)
	}
	c.Groups = []chart.Group{measured, th}
	return c
}
