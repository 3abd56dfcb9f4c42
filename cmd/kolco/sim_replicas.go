package main

import (
	"cmp"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/chart"
	"github.com/kolco-dev/kolco/sim"
	"github.com/kolco-dev/kolco/sim/keys"
	"github.com/kolco-dev/kolco/sim/report"
)

func newSimReplicasCmd() *cobra.Command {
	var (
		sf                              setupFlags
		of                              outputFlags
		nodes, zones, replicas, numKeys int
		nodesFile                       string
		zoneAware                       bool
	)
	cmd := &cobra.Command{
		Use:   "replicas",
		Short: "How many distinct nodes and zones replica sets span",
		Long: `Look up --replicas owners of each synthetic key and report the mean number
of distinct nodes and zones per replica set, and the share of keys whose
replicas span as many zones as possible, min(replicas, zones).

Nodes are "node-0", ... spread round-robin over --zones zones "zone-0", ...,
or come from --nodes-file ("ID [WEIGHT [ZONE]]"). --zone-aware makes the
ring take distinct zones first.

Example:

  $ kolco sim replicas --algo ring,rendezvous --nodes 12 --zones 3 --replicas 3
  $ kolco sim replicas --zone-aware --nodes 12 --zones 3 --replicas 3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			setups, err := simInputs(cmd.Flags(), &sf, &of, numKeys)
			if err != nil {
				return err
			}
			for i := range setups {
				setups[i].Opts.ZoneAware = zoneAware
			}
			if err := atLeast("replicas", replicas, 1); err != nil {
				return err
			}
			set, err := nodesFromFile(nodesFile)
			if err != nil {
				return err
			}
			if set == nil {
				if err := cmp.Or(atLeast("nodes", nodes, 1), atLeast("zones", zones, 1)); err != nil {
					return err
				}
				for i := range nodes {
					set = append(set, kolco.Node{ID: "node-" + strconv.Itoa(i), Zone: "zone-" + strconv.Itoa(i%zones)})
				}
			}
			if err := checkReplicas(replicas, len(set)); err != nil {
				return err
			}
			res, err := sim.Replicas(sim.ReplicasConfig{Setups: setups, Nodes: set, Replicas: replicas, Keys: keys.Synthetic(numKeys)})
			if err != nil {
				return err
			}
			return of.emit(cmd, res, func() chart.Chart { return replicasChart(res) })
		},
	}
	sf.register(cmd.Flags(), defaultVNodes())
	of.register(cmd.Flags())
	countFlag(cmd.Flags(), &nodes, 12, true, "number of nodes (one count, not IDs; your own nodes go in --nodes-file)")
	cmd.Flags().IntVar(&zones, "zones", 3, "number of zones the nodes are spread over (unless --nodes-file)")
	cmd.Flags().StringVar(&nodesFile, "nodes-file", "", "file of nodes, one per line: ID [WEIGHT [ZONE]]")
	cmd.Flags().IntVar(&replicas, "replicas", 3, "owners per key")
	cmd.Flags().BoolVar(&zoneAware, "zone-aware", false, "replicas in distinct zones first (ring)")
	keysFlag(cmd.Flags(), &numKeys, 200_000)
	return cmd
}

// replicasChart draws, per setup, the share of keys spanning each number of zones.
func replicasChart(r *sim.ReplicasResult) chart.Chart {
	c := chart.Bars{Title: "zones spanned by replica sets", YLabel: "share of keys", Percent: true}
	for z := 1; z <= r.Replicas; z++ {
		c.Categories = append(c.Categories, report.Count(z, "zone", "zones"))
	}
	for _, x := range r.Rows {
		c.Groups = append(c.Groups, chart.Group{Name: x.Setup, Values: x.ZoneHist[1:]})
	}
	return c
}
