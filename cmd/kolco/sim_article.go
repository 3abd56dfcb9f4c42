package main

import (
	"github.com/kolco-dev/kolco/sim/article"
	"github.com/spf13/cobra"
)

func newSimArticleCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "article",
		Short: "Rerun every measurement of the article this project reproduces",
		Long: `Rerun every measurement of the article "Консистентное хеширование:
кольцо хешей, виртуальные узлы и код на Python" with its set-up: keys
"user:0".."user:999999" hashed with md5 (the first 8 bytes, big-endian), nodes
"node-0".."node-10", rings of "ID#i" points, and print its tables with its
rounding:

  - hash % N: the share of keys moved for 10->11, 10->9, 100->101, 10->20;
  - the three-node demo (cache-a, cache-b, cache-c; user:42);
  - one ring 10->11 for V = 1, 10, 100, 1000 (moved, share to the new node,
    donors, max/avg, min/avg, spread = stdev/avg);
  - the same over 30 node name sets of 100k keys (min/avg/max moved, mean
    max/avg, mean spread);
  - the failure of the most loaded node for V = 1 and 100;
  - the weight split of small-1, small-2 and big (weight 2) at V = 1000, 100;
  - rendezvous (md5 of "node:key") 10->11 over 200k keys;
  - the cost examples: a cache at 100k RPS and 95% hits, 3 TB of storage.

Example:

  $ kolco sim article | head -5
  hash % N, 1000000 keys user:0..:
   10 -> 11  moved 90.87%
   10 -> 9   moved 90.04%
  100 -> 101 moved 99.00%
   10 -> 20  moved 49.97%`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := article.Run(progressTo(cmd.ErrOrStderr()))
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), a)
			}
			return a.WriteText(cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as one JSON document")
	return cmd
}
