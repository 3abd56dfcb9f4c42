package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/kolco-dev/kolco/sim"
)

func newSimCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Run placement experiments",
		Long: `Run placement experiments and print their results.

  kolco sim article          # every measurement of the article
  kolco sim article --json   # the same as one JSON document
  kolco sim remap --algo ring,rendezvous,jump,modulo   # keys moved by a change
  kolco sim balance --vnodes 1,10,100,1000             # spread against V, with the theory
  kolco sim failure --vnodes 1,100 --cascade 2         # who absorbs a failed node
  kolco sim hotkeys --algo ring,bounded --zipf 1.1     # request load under hot keys

Each experiment takes --json, --csv and --plot FILE.svg|.png.

The experiments make up their nodes, so their --nodes is a count: one count
for remap, failure, hotkeys and replicas (--nodes 10), a list of counts to
compare for balance and lookup (--nodes 10,100,1000). failure, replicas and
weights take nodes of your own from --nodes-file. kolco locate and kolco
plan place keys on named nodes: their --nodes is a list of IDs
(--nodes cache-a,cache-b).`,
		RunE: groupCmd,
	}
	cmd.AddCommand(newSimArticleCmd())
	cmd.AddCommand(newSimRemapCmd(), newSimBalanceCmd(), newSimFailureCmd(), newSimWeightsCmd(), newSimReplicasCmd(), newSimLookupCmd(), newSimHotkeysCmd())
	return cmd
}

// progressTo returns a progress callback that redraws one status line on w,
// or nil when w is not a terminal (progress would only clutter a log).
func progressTo(w io.Writer) sim.Progress {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return func(done, total int, step string) {
		fmt.Fprintf(w, "\r%s: %d/%d", step, done, total)
		if done == total {
			fmt.Fprint(w, "\r\033[K")
		}
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
