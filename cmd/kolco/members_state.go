package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/etcd"
	"github.com/kolco-dev/kolco/sim/report"
)

// stateReport is what "members state" prints.
type stateReport struct {
	Source   string `json:"source"`
	Revision int64  `json:"revision"`
	// Algorithm is empty when the membership keeps no placement state.
	Algorithm string `json:"algorithm,omitempty"`
	// Nodes counts the nodes the state was computed for; Current says
	// whether they are the nodes that take keys now.
	Nodes   int  `json:"nodes,omitempty"`
	Bytes   int  `json:"bytes,omitempty"`
	Current bool `json:"current,omitempty"`
	// Fingerprint is that of the placement at this revision, with Hash.
	Fingerprint string `json:"fingerprint,omitempty"`
	Hash        string `json:"hash,omitempty"`
}

// stateFlags are the flags of "members state".
type stateFlags struct {
	init          string
	clear, asJSON bool
	capacity      int
	slots         int
	hash          string
}

func newMembersStateCmd(ef *etcdFlags) *cobra.Command {
	var sf stateFlags
	cmd := &cobra.Command{
		Use:   "state",
		Short: "Print, set up or clear the placement state of a history-dependent algorithm",
		Long: `Print, set up or clear the placement state that the membership keeps for a
history-dependent algorithm: jump, jumpback, jumpbackanchor, flip, binomial,
power, anchor, dx or slots.

Those algorithms place keys by the history of changes, not by the node set
alone, so that two proxies that lived through different histories place
keys differently. The membership keeps the state that decides placement
beside the nodes: every change made with "kolco members" computes the next
state from the stored one and writes both in one transaction, and a proxy
or client that starts later builds the same placement from it. Set it up
once, before the fleet follows the membership (followers already running
take the stored state over):

  kolco members --prefix /kolco/cache/ state --init jump
  kolco members --prefix /kolco/cache/ state --init anchor --capacity 64
  kolco members --prefix /kolco/cache/ state --hash xxh3
  kolco members --prefix /kolco/cache/ state --clear

The printed fingerprint is that of the placement at the current revision
with --hash (default: the algorithm's), the fingerprint every proxy and
client that follows the membership reports. A change made without
"kolco members" - a registered node's lease expiring - leaves the state
behind the nodes: followers still agree (the placement is the state changed
to the nodes of the moment), and the next change brings it up to date.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sf.run(cmd, ef)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&sf.init, "init", "", "keep the state of this algorithm ("+strings.Join(stateful(0), ", ")+") over the nodes that take keys now")
	fs.IntVar(&sf.capacity, "capacity", 0, "with --init "+strings.Join(stateful(algo.CapacityOption), " or ")+": its fixed number of buckets, the most nodes it can hold")
	fs.IntVar(&sf.slots, "slots", 0, "with --init slots: the number of hash slots")
	fs.BoolVar(&sf.clear, "clear", false, "stop keeping a placement state")
	fs.StringVar(&sf.hash, "hash", "", "the key hash the fleet places with, for the fingerprint (default: the algorithm's)")
	fs.BoolVar(&sf.asJSON, "json", false, "print the state as one JSON document")
	return cmd
}

// check refuses flags that do not go together.
func (sf *stateFlags) check(cmd *cobra.Command) error {
	fs := cmd.Flags()
	switch {
	case sf.init != "" && sf.clear:
		return usagef("--init and --clear exclude each other")
	case fs.Changed("capacity") && !slices.Contains(stateful(algo.CapacityOption), sf.init):
		return usagef("--capacity applies to --init %s", strings.Join(stateful(algo.CapacityOption), " or "))
	case fs.Changed("slots") && sf.init != "slots":
		return usagef("--slots applies to --init slots")
	case sf.hash != "" && (sf.init != "" || sf.clear):
		return usagef("--hash applies to printing the state")
	}
	if sf.init != "" {
		info, ok := algo.Lookup(sf.init)
		switch {
		case !ok || info.Name != sf.init:
			return unknownName("--init", sf.init, stateful(0))
		case !info.HistoryDependent:
			return usagef("--init %s: %s keeps no state, its placement follows from the node set alone", sf.init, sf.init)
		}
	}
	if sf.hash != "" {
		if _, err := keyhash.Parse(sf.hash); err != nil {
			return usageError{err}
		}
	}
	return nil
}

func (sf *stateFlags) run(cmd *cobra.Command, ef *etcdFlags) error {
	if err := sf.check(cmd); err != nil {
		return err
	}
	switch {
	case sf.init != "":
		opts := algo.Options{Capacity: sf.capacity, Slots: sf.slots}
		return edit(cmd, ef, "keeping the placement state of "+sf.init, func(snap etcd.Listing) (etcd.Edit, error) {
			if snap.State != nil {
				return etcd.Edit{}, errors.New("a placement state is kept already: --clear it first (followers then place by their own history until one is set up again)")
			}
			ps, err := membership.NewPlacementState(sf.init, snap.Version().Nodes, opts)
			if err != nil {
				return etcd.Edit{}, err
			}
			return etcd.Edit{State: ps.Marshal()}, nil
		})
	case sf.clear:
		return edit(cmd, ef, "cleared the placement state", func(snap etcd.Listing) (etcd.Edit, error) {
			if snap.State == nil {
				return etcd.Edit{}, errors.New("no placement state is kept")
			}
			return etcd.Edit{ClearState: true}, nil
		})
	}
	s, err := ef.storeNow()
	if err != nil {
		return err
	}
	defer s.Close()
	v, err := s.Read(cmd.Context())
	if err != nil {
		return ef.hint(err)
	}
	r, err := sf.report(v)
	if err != nil {
		return err
	}
	r.Source = "etcd " + ef.endpoints + " " + s.Prefix()
	if sf.asJSON {
		return writeJSON(cmd.OutOrStdout(), r)
	}
	return r.write(cmd.OutOrStdout())
}

// report describes the state kept at v, with the fingerprint of the
// placement there.
func (sf *stateFlags) report(v membership.Version) (stateReport, error) {
	r := stateReport{Revision: v.Revision}
	if v.State == nil {
		return r, nil
	}
	ps, err := membership.ParsePlacementState(v.State)
	if err != nil {
		return r, err
	}
	r.Algorithm, r.Nodes, r.Bytes, r.Current = ps.Algorithm, len(ps.Nodes), len(ps.State), ps.Current(v.Nodes)
	var opts algo.Options
	if sf.hash != "" {
		opts.Hash, _ = keyhash.Parse(sf.hash) // checked
	}
	p, err := ps.Placement(v.Nodes, opts)
	if err != nil {
		return r, err
	}
	if r.Fingerprint, err = kolco.Fingerprint(p); err != nil {
		return r, err
	}
	r.Hash = sf.hash
	if r.Hash == "" {
		r.Hash = "the algorithm's default"
	}
	return r, nil
}

func (r stateReport) write(w io.Writer) error {
	var err error
	switch {
	case r.Algorithm == "":
		_, err = fmt.Fprintf(w, "%s at revision %d: no placement state kept; followers place by the node set and their own history\n", r.Source, r.Revision)
	default:
		current := "current"
		if !r.Current {
			current = "behind the nodes (changed without it since); the next change brings it up to date"
		}
		_, err = fmt.Fprintf(w, "%s at revision %d: %s state over %s (%d bytes), %s\nfingerprint %s (key hash: %s)\n",
			r.Source, r.Revision, r.Algorithm, report.Count(r.Nodes, "node", "nodes"), r.Bytes, current, r.Fingerprint, r.Hash)
	}
	return err
}

// stateful returns the names of the history-dependent algorithms that
// read every option of opts, in the registry's order.
func stateful(opts algo.Option) []string {
	var names []string
	for _, a := range algo.All() {
		if a.HistoryDependent && a.Options.Has(opts) {
			names = append(names, a.Name)
		}
	}
	return names
}
