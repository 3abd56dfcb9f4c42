package main

import (
	"bufio"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat"
	"github.com/kolco-dev/kolco/sim/report"
)

// maxKeyLine bounds one input line, so that input without newlines fails
// with an error instead of growing a buffer without limit.
const maxKeyLine = 1 << 20

func newLocateCmd() *cobra.Command {
	var (
		pf       placementFlags
		cf       compatFlags
		replicas int
	)
	cmd := &cobra.Command{
		Use:   "locate",
		Short: "Print the owner of each key read from stdin",
		Long: `Read keys from stdin, one per line, and print for each one line
"key<TAB>owner"; with --replicas N, the N distinct owners in preference order,
tab-separated (N at most the number of nodes). A trailing CR is dropped from
each line, and empty lines are skipped.

Example:

  $ printf 'user:1\nuser:2\n' | kolco locate --nodes cache-a,cache-b,cache-c
  user:1	cache-a
  user:2	cache-b

  $ printf 'user:42\n' | kolco locate --article --nodes cache-a,cache-b,cache-c --replicas 2
  user:42	cache-a	cache-b

--algo picks the placement algorithm (ring, rendezvous, jump, maglev, ...);
--add and --remove apply a change on top of the starting nodes, in that
order, so that algorithms whose placement depends on history (jump with
removals, anchor, slots) are shown as a running system would place keys.

--algo twemproxy|libmemcached|nginx|haproxy|redis|goredis|pymemcache|cassandra|envoy
places keys exactly where that system does, from its own description of its
servers: a whole configuration file, or a server list in its own syntax.

  $ kolco locate --algo twemproxy --config nutcracker.yml --pool alpha < keys.txt
  $ kolco locate --algo libmemcached --distribution ketama_weighted \
        --servers 10.0.0.1:11211:2,10.0.0.2:11211:1 < keys.txt
  $ kolco locate --algo nginx --config nginx.conf --upstream cache < keys.txt
  $ kolco locate --algo haproxy --config haproxy.cfg --backend web < keys.txt
  $ kolco locate --algo redis --config cluster-nodes.txt < keys.txt  # CLUSTER NODES output
  $ kolco locate --algo goredis --servers shard1=10.0.0.1:6379,shard2=10.0.0.2:6379 < keys.txt
  $ kolco locate --algo pymemcache --servers 10.0.0.1:11211,10.0.0.2:11211 < keys.txt
  $ kolco locate --algo cassandra --config ring.txt < keys.txt     # nodetool ring output
  $ kolco locate --algo envoy --distribution maglev --servers 10.0.0.1:80=2,10.0.0.2:80 < keys.txt

A file with several pools, upstreams or backends needs --pool (or, in the
system's own word, --upstream or --backend) to choose one; without it, or
with a name the file does not have, kolco lists the names. A file with one
needs no choice. HAProxy backends inherit hash-type and default-server from
their defaults section, as in HAProxy.

--hash then names that system's hash (fnv1a_64, one_at_a_time, md5, ...).

A node file holds one node per line, "ID [WEIGHT [ZONE]]":

  $ kolco locate --nodes-file nodes.txt --replicas 3 --zone-aware < keys.txt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := atLeast("replicas", replicas, 1); err != nil {
				return err
			}
			var (
				p   kolco.Placement
				err error
			)
			if sys, ok := compat.Lookup(pf.algo); ok {
				p, err = cf.buildCompat(sys, &pf, cmd.Flags())
			} else if err = rejectCompatFlags(pf.algo, cmd.Flags()); err == nil {
				p, err = pf.build(cmd.Flags())
			}
			if err != nil {
				return err
			}
			return locate(cmd, p, replicas)
		},
	}
	pf.register(cmd.Flags())
	cf.register(cmd.Flags())
	cmd.Flags().Lookup("algo").Usage = "placement algorithm or system to reproduce: " + algoList()
	cmd.Flags().IntVar(&replicas, "replicas", 1, "number of distinct owners to print per key")
	return cmd
}

// checkReplicas refuses a --replicas count above the number of nodes,
// for every command that takes one: a key has at most one owner per node,
// and LocateN would quietly return fewer than asked.
func checkReplicas(replicas, nodes int) error {
	if replicas > nodes {
		return usagef("--replicas %d: a key has at most %s, one per node", replicas, report.Count(nodes, "distinct owner", "distinct owners"))
	}
	return nil
}

// locate prints the owners of each key read from stdin, one per line;
// empty lines are skipped, and input without a key is an error.
func locate(cmd *cobra.Command, p kolco.Placement, replicas int) error {
	if err := checkReplicas(replicas, len(p.Nodes())); err != nil {
		return err
	}
	in := bufio.NewScanner(cmd.InOrStdin())
	in.Buffer(make([]byte, 0, 64<<10), maxKeyLine)
	out := bufio.NewWriterSize(cmd.OutOrStdout(), 64<<10)
	owners := make([]kolco.Node, 0, replicas)
	placed := 0
	for line := 1; in.Scan(); line++ {
		key := in.Text()
		if n := len(key); n > 0 && key[n-1] == '\r' {
			key = key[:n-1]
		}
		if key == "" {
			continue
		}
		placed++
		var err error
		owners, err = p.LocateN(owners[:0], key, replicas)
		if err != nil {
			out.Flush() // keep the answers already computed
			return fmt.Errorf("line %d: %w", line, err)
		}
		out.WriteString(key)
		for _, o := range owners {
			out.WriteByte('\t')
			out.WriteString(o.ID)
		}
		out.WriteByte('\n')
	}
	if err := in.Err(); err != nil {
		out.Flush()
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("stdin: a line is longer than %d bytes", maxKeyLine)
		}
		return err
	}
	if placed == 0 {
		return errors.New("no keys on stdin: give one key per line")
	}
	return out.Flush()
}
