package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/dns"
	"github.com/kolco-dev/kolco/membership/gossip"
	"github.com/kolco-dev/kolco/sim/report"
)

// sourceFlags choose a DNS name or a file instead of etcd.
type sourceFlags struct {
	file, pool      string
	dnsName         string
	dnsServer       string
	records         string
	port            int
	stable, weights bool
	gossip          gossipFlags
}

// listed is one node as "members list" prints it.
type listed struct {
	ID      string  `json:"id"`
	Weight  float64 `json:"weight"`
	Zone    string  `json:"zone,omitempty"`
	Addr    string  `json:"addr,omitempty"`
	Drained bool    `json:"drained,omitempty"`
	Lease   string  `json:"lease,omitempty"`
}

// listing is the whole output of "members list".
type listing struct {
	Source     string   `json:"source"`
	Revision   int64    `json:"revision,omitempty"`
	Nodes      []listed `json:"nodes"`
	StateBytes int      `json:"state_bytes,omitempty"`
}

func newMembersListCmd(ef *etcdFlags) *cobra.Command {
	var sf sourceFlags
	gf := &sf.gossip
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Print the membership: etcd's, or what a DNS name or a file gives",
		Long: `Print the nodes of a membership, as a table or --json: from etcd (the
default), from DNS (--dns: SRV records, nodes named by target host; A records
only with --records A --port N --stable-addresses), or from a file (--file:
kolco's node list, or one pool of a nutcracker.yml with --pool), or from a
gossip pool (--gossip: joins it briefly as an observer through --seed, and
leaves).

  kolco members --prefix /kolco/cache/ list
  kolco members list --dns _memcache._tcp.mc.default.svc.cluster.local.
  kolco members list --file nutcracker.yml --pool alpha --json
  kolco members list --gossip 127.0.0.1:7999 --seed 10.0.0.9:7946`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := sf.list(cmd, ef)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), l.out)
			}
			if err := l.out.writeTable(cmd.OutOrStdout()); err != nil {
				return err
			}
			return l.refused
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&sf.file, "file", "", "read a node file (ID [WEIGHT [ZONE]] per line) or a nutcracker.yml (.yml, .yaml)")
	fs.StringVar(&sf.pool, "pool", "", "the nutcracker.yml pool to read (default: the only one)")
	fs.StringVar(&sf.dnsName, "dns", "", "look up this DNS name: SRV records, or A/AAAA with --records A")
	fs.StringVar(&sf.dnsServer, "dns-server", "", "ask this DNS server (host:port) instead of the system's resolver")
	fs.StringVar(&sf.records, "records", dns.SRV, "DNS records to look up: SRV or A")
	fs.IntVar(&sf.port, "port", 0, "the port of nodes found by A records")
	fs.BoolVar(&sf.stable, "stable-addresses", false, "the addresses DNS gives keep naming the same servers across restarts")
	fs.BoolVar(&sf.weights, "srv-weights", false, "take SRV weights as node weights (CoreDNS's change with every scale event)")
	fs.BoolVar(&asJSON, "json", false, "print the membership as one JSON document")
	gf.register(fs)
	return cmd
}

// listResult is a listing and, for etcd, the values it refused.
type listResult struct {
	out     listing
	refused error
}

// list reads the source the flags choose.
func (sf *sourceFlags) list(cmd *cobra.Command, ef *etcdFlags) (listResult, error) {
	fs := cmd.Flags()
	dnsOnly := []string{"dns-server", "records", "port", "stable-addresses", "srv-weights"}
	if sf.gossip.bind != "" {
		if sf.file != "" || sf.dnsName != "" {
			return listResult{}, usagef("--gossip excludes --file and --dns")
		}
		cfg, err := sf.gossip.config(cmd, gossip.Meta{Role: gossip.RoleObserver})
		if err != nil {
			return listResult{}, err
		}
		return listGossip(cmd.Context(), cfg)
	}
	if err := refuseGossipFlags(cmd); err != nil {
		return listResult{}, err
	}
	switch {
	case sf.file != "" && sf.dnsName != "":
		return listResult{}, usagef("--file and --dns exclude each other")
	case sf.file != "" || sf.dnsName != "":
		for _, name := range etcdFlagNames {
			if fs.Changed(name) {
				return listResult{}, usagef("--%s applies to etcd, not to --file or --dns", name)
			}
		}
	}
	if sf.pool != "" && sf.file == "" {
		return listResult{}, usagef("--pool applies to --file")
	}
	if sf.dnsName == "" {
		for _, name := range dnsOnly {
			if fs.Changed(name) {
				return listResult{}, usagef("--%s applies to --dns", name)
			}
		}
	}
	switch {
	case sf.file != "":
		f := &membership.File{Path: sf.file, Pool: sf.pool}
		v, err := f.Read(cmd.Context())
		if isConfigError(err) {
			return listResult{}, usageError{err}
		}
		return listResult{out: fromVersion("file "+sf.file, v)}, err
	case sf.dnsName != "":
		return sf.listDNS(cmd.Context())
	}
	return listEtcd(cmd.Context(), ef)
}

func (sf *sourceFlags) listDNS(ctx context.Context) (listResult, error) {
	src := &dns.Source{Name: sf.dnsName, Records: strings.ToUpper(sf.records), Port: sf.port, StableAddresses: sf.stable, UseWeights: sf.weights}
	if sf.dnsServer != "" {
		if _, _, err := net.SplitHostPort(sf.dnsServer); err != nil {
			return listResult{}, usagef("--dns-server %q: want host:port", sf.dnsServer)
		}
		src.Resolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, sf.dnsServer)
		}}
	}
	v, err := src.Read(ctx)
	if isConfigError(err) {
		return listResult{}, usageError{err}
	}
	return listResult{out: fromVersion("dns "+sf.dnsName, v)}, err
}

func listEtcd(ctx context.Context, ef *etcdFlags) (listResult, error) {
	s, err := ef.storeNow()
	if err != nil {
		return listResult{}, err
	}
	defer s.Close()
	snap, err := s.List(ctx)
	if err != nil {
		return listResult{}, ef.hint(err)
	}
	out := listing{Source: "etcd " + ef.endpoints + " " + s.Prefix(), Revision: snap.Revision, Nodes: []listed{}, StateBytes: len(snap.State)}
	for _, m := range snap.Members {
		l := listed{ID: m.ID, Weight: m.EffectiveWeight(), Zone: m.Zone, Addr: m.Addr, Drained: m.Drained}
		if m.Lease != 0 {
			l.Lease = strconv.FormatInt(m.Lease, 16)
		}
		out.Nodes = append(out.Nodes, l)
	}
	res := listResult{out: out}
	if n := len(snap.Invalid); n > 0 {
		res.refused = fmt.Errorf("%s under %s refused; first: %w", report.Count(n, "value", "values"), s.Prefix(), snap.Invalid[0])
	}
	return res, nil
}

// fromVersion lists a version's nodes.
func fromVersion(source string, v membership.Version) listing {
	out := listing{Source: source, Revision: v.Revision, Nodes: []listed{}, StateBytes: len(v.State)}
	for _, n := range v.Nodes {
		out.Nodes = append(out.Nodes, listed{ID: n.ID, Weight: n.EffectiveWeight(), Zone: n.Zone, Addr: n.Addr})
	}
	for _, n := range v.Drained {
		out.Nodes = append(out.Nodes, listed{ID: n.ID, Weight: n.EffectiveWeight(), Zone: n.Zone, Addr: n.Addr, Drained: true})
	}
	return out
}

// writeTable prints the listing as a title line and aligned columns.
func (l listing) writeTable(w io.Writer) error {
	var b strings.Builder
	drained := 0
	for _, n := range l.Nodes {
		if n.Drained {
			drained++
		}
	}
	fmt.Fprintf(&b, "%s", l.Source)
	if l.Revision != 0 {
		fmt.Fprintf(&b, " at revision %d", l.Revision)
	}
	fmt.Fprintf(&b, ": %s", report.Count(len(l.Nodes)-drained, "node", "nodes"))
	if drained > 0 {
		fmt.Fprintf(&b, ", %d drained", drained)
	}
	if l.StateBytes > 0 {
		fmt.Fprintf(&b, ", placement state of %d bytes (see members state)", l.StateBytes)
	}
	b.WriteString("\n")
	if len(l.Nodes) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tWEIGHT\tZONE\tADDR\tSTATE\tLEASE")
		for _, n := range l.Nodes {
			state, lease := "serving", "-"
			if n.Drained {
				state = "drained"
			}
			if n.Lease != "" {
				lease = n.Lease
			}
			fmt.Fprintf(tw, "%s\t%v\t%s\t%s\t%s\t%s\n", n.ID, n.Weight, dash(n.Zone), dash(n.Addr), state, lease)
		}
		tw.Flush()
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
