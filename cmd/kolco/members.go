package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/etcd"
)

// etcdFlags say where a membership in etcd is and how to reach it.
type etcdFlags struct {
	endpoints    string
	prefix       string
	cacert       string
	cert, key    string
	user         string
	passwordFile string
	timeout      time.Duration
}

func (e *etcdFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&e.endpoints, "endpoints", "http://127.0.0.1:2379", "comma-separated etcd client URLs")
	fs.StringVar(&e.prefix, "prefix", "", "the membership's key prefix in etcd, such as /kolco/cache/ (required for etcd)")
	fs.StringVar(&e.cacert, "cacert", "", "PEM file of the authority that signs etcd's certificate (turns TLS on)")
	fs.StringVar(&e.cert, "cert", "", "client certificate file for etcd (with --key)")
	fs.StringVar(&e.key, "key", "", "client key file for etcd (with --cert)")
	fs.StringVar(&e.user, "user", "", "etcd user, as NAME or NAME:PASSWORD")
	fs.StringVar(&e.passwordFile, "password-file", "", "file holding the etcd user's password (with --user NAME)")
	fs.DurationVar(&e.timeout, "timeout", 5*time.Second, "how long to wait for etcd on each request")
}

// etcdFlagNames are the flags above, refused with a DNS or file source.
var etcdFlagNames = []string{"endpoints", "prefix", "cacert", "cert", "key", "user", "password-file", "timeout"}

// store returns the etcd store the flags describe. Mistakes in the flags
// are usage errors; a password file that cannot be read is not.
func (e *etcdFlags) store() (*etcd.Store, error) {
	if e.prefix == "" {
		return nil, usagef("--prefix is required: the membership's key prefix in etcd, such as /kolco/cache/")
	}
	if err := etcd.CheckPrefix(e.prefix); err != nil {
		return nil, usageError{fmt.Errorf("--prefix: %w", err)}
	}
	if e.timeout <= 0 {
		return nil, usagef("--timeout must be positive (got %v)", e.timeout)
	}
	cfg := etcd.Config{Prefix: e.prefix, CAFile: e.cacert, CertFile: e.cert, KeyFile: e.key, Timeout: e.timeout}
	for _, ep := range strings.Split(e.endpoints, ",") {
		if ep = strings.TrimSpace(ep); ep != "" {
			cfg.Endpoints = append(cfg.Endpoints, ep)
		}
	}
	if e.user != "" {
		name, password, hasPassword := strings.Cut(e.user, ":")
		switch {
		case hasPassword && e.passwordFile != "":
			return nil, usagef("--user NAME:PASSWORD and --password-file exclude each other")
		case !hasPassword && e.passwordFile == "":
			return nil, usagef("--user %s needs a password: --user NAME:PASSWORD or --password-file FILE", name)
		case !hasPassword:
			data, err := os.ReadFile(e.passwordFile)
			if err != nil {
				return nil, err
			}
			password = strings.TrimRight(string(data), "\r\n")
		}
		cfg.Username, cfg.Password = name, password
	} else if e.passwordFile != "" {
		return nil, usagef("--password-file needs --user NAME")
	}
	s, err := etcd.New(cfg)
	if err != nil {
		return nil, usageError{err}
	}
	return s, nil
}

func newMembersCmd() *cobra.Command {
	ef := &etcdFlags{}
	cmd := &cobra.Command{
		Use:   "members",
		Short: "List and change the membership a fleet of proxies and clients follows",
		Long: `List and change the membership that proxies and clients follow, so that
they all place keys on the same nodes.

The membership lives in etcd, under a key prefix of its own: a node is the
key PREFIX/nodes/ID with a JSON value {"weight": 2, "zone": "eu-1",
"addr": "10.0.0.7:11211"}. Every change is one transaction guarded by the
revision it was computed from, so that two operators changing it at once
cannot lose a change: the second reads again and retries. "list" also
prints what a DNS name or a node file gives.

  kolco members --prefix /kolco/cache/ add cache-d --addr 10.0.0.4:11211
  kolco members --prefix /kolco/cache/ list
  kolco members --prefix /kolco/cache/ reweight cache-d 2
  kolco members --prefix /kolco/cache/ drain cache-a      # no keys, still listed
  kolco members --prefix /kolco/cache/ remove cache-a
  kolco members --prefix /kolco/cache/ register --ttl 10s mc-1 10.0.0.9:11211
                                          # a sidecar: mc-1 stays while it runs
  kolco members --prefix /kolco/cache/ state --init jump
                                          # for jump, anchor, ...: keep the state
                                          # that decides placement beside the nodes
  kolco members list --dns _memcache._tcp.mc.default.svc.cluster.local.
  kolco members list --file /etc/nutcracker/nutcracker.yml --pool alpha
  kolco members register --gossip 10.0.0.9:7946 --seed 10.0.0.8:7946 mc-1 10.0.0.9:11211
                                          # no etcd: hold mc-1 in a gossip pool
  kolco members list --gossip 10.0.0.7:7999 --seed 10.0.0.8:7946

etcd is reached at --endpoints, over TLS with --cacert (and --cert/--key for
client certificates), as --user when it has auth on.`,
		RunE: groupCmd,
	}
	ef.register(cmd.PersistentFlags())
	cmd.AddCommand(newMembersListCmd(ef), newMembersAddCmd(ef), newMembersRemoveCmd(ef),
		newMembersReweightCmd(ef), newMembersDrainCmd(ef), newMembersRegisterCmd(ef), newMembersStateCmd(ef))
	return cmd
}

// nodeFlags are the weight and zone of a node being added or registered.
type nodeFlags struct {
	weight float64
	zone   string
}

func (n *nodeFlags) register(fs *pflag.FlagSet) {
	fs.Float64Var(&n.weight, "weight", 1, "relative capacity: a node of weight 2 takes twice the keys")
	fs.StringVar(&n.zone, "zone", "", "failure domain (rack, zone), for replicas in distinct zones")
}

// node returns the node named id at addr, checked.
func (n *nodeFlags) node(id, addr string) (kolco.Node, error) {
	if err := nodeset.CheckWeight(n.weight); err != nil {
		return kolco.Node{}, usagef("--weight: %w", err)
	}
	node := kolco.Node{ID: id, Weight: n.weight, Zone: n.zone, Addr: addr}
	if _, err := etcd.ParseValue(id, etcd.EncodeValue(etcd.Member{Node: node})); err != nil {
		return kolco.Node{}, usageError{err}
	}
	return node, nil
}

// unchanged is returned by an edit's fn for a change that would leave the
// membership as it is at revision rev: edit writes nothing, since a write
// would still make a revision that every follower wakes up for, and says
// what it found.
type unchanged struct {
	what string
	rev  int64
}

func (u unchanged) Error() string { return u.what }

// edit applies the change fn computes to the store the flags describe and
// prints what was done.
func edit(cmd *cobra.Command, ef *etcdFlags, done string, fn func(etcd.Listing) (etcd.Edit, error)) error {
	s, err := ef.storeNow()
	if err != nil {
		return err
	}
	defer s.Close()
	rev, err := s.Update(cmd.Context(), fn)
	var u unchanged
	if errors.As(err, &u) {
		fmt.Fprintf(cmd.OutOrStdout(), "%s: nothing written (revision %d)\n", u.what, u.rev)
		return nil
	}
	if err != nil {
		return ef.hint(err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s (revision %d)\n", done, rev)
	return nil
}

func newMembersAddCmd(ef *etcdFlags) *cobra.Command {
	var nf nodeFlags
	var addr string
	cmd := &cobra.Command{
		Use:   "add NAME",
		Short: "Add a node for good",
		Long: `Add a node to the membership, for good: it stays until removed. NAME is the
node's stable identity, what placement hashes; never use an address that
changes on restart. --addr is where to reach it.

  kolco members --prefix /kolco/cache/ add cache-d --addr 10.0.0.4:11211 --weight 2`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			node, err := nf.node(args[0], addr)
			if err != nil {
				return err
			}
			return edit(cmd, ef, "added "+node.ID, func(etcd.Listing) (etcd.Edit, error) {
				return etcd.Edit{Change: kolco.Change{Add: []kolco.Node{node}}}, nil
			})
		},
	}
	nf.register(cmd.Flags())
	cmd.Flags().StringVar(&addr, "addr", "", "the node's address, such as 10.0.0.4:11211")
	return cmd
}

func newMembersRemoveCmd(ef *etcdFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME...",
		Short: "Remove nodes",
		Long: `Remove nodes from the membership, drained or not, in one change. A node
registered by a sidecar is removed too; its sidecar does not add it back
while it keeps running.

  kolco members --prefix /kolco/cache/ remove cache-a cache-b`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return edit(cmd, ef, "removed "+strings.Join(args, ", "), func(etcd.Listing) (etcd.Edit, error) {
				return etcd.Edit{Change: kolco.Change{Remove: args}}, nil
			})
		},
	}
}

func newMembersReweightCmd(ef *etcdFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "reweight NAME WEIGHT",
		Short: "Set a node's weight",
		Long: `Set a node's relative capacity; its zone, address, drain and lease stay.
A node that already has the weight is left alone: nothing is written.

  kolco members --prefix /kolco/cache/ reweight cache-d 2`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			w, err := strconv.ParseFloat(args[1], 64)
			if err != nil {
				return usagef("weight %q is not a number", args[1])
			}
			if err := nodeset.CheckWeight(w); err != nil {
				return usageError{err}
			}
			return edit(cmd, ef, fmt.Sprintf("reweighted %s to %v", args[0], w), func(snap etcd.Listing) (etcd.Edit, error) {
				m, ok := snap.Member(args[0])
				if !ok {
					return etcd.Edit{}, fmt.Errorf("%w: %q", kolco.ErrUnknownNode, args[0])
				}
				if m.EffectiveWeight() == w {
					return etcd.Edit{}, unchanged{fmt.Sprintf("%s already weighs %v", m.ID, w), snap.Revision}
				}
				m.Weight = w
				return etcd.Edit{Change: kolco.Change{Update: []kolco.Node{m.Node}}}, nil
			})
		},
	}
}

func newMembersDrainCmd(ef *etcdFlags) *cobra.Command {
	var undo bool
	cmd := &cobra.Command{
		Use:   "drain NAME...",
		Short: "Take nodes out of placement, keeping them listed",
		Long: `Take nodes out of placement: they take no keys, but stay listed with their
address, so that proxies can still read what they hold while their keys
move, and so that --undo puts them back as they were. Remove them once
drained.

  kolco members --prefix /kolco/cache/ drain cache-a
  kolco members --prefix /kolco/cache/ drain --undo cache-a`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			done := "drained "
			if undo {
				done = "undrained "
			}
			return edit(cmd, ef, done+strings.Join(args, ", "), func(etcd.Listing) (etcd.Edit, error) {
				if undo {
					return etcd.Edit{Undrain: args}, nil
				}
				return etcd.Edit{Drain: args}, nil
			})
		},
	}
	cmd.Flags().BoolVar(&undo, "undo", false, "put drained nodes back into placement")
	return cmd
}

// isConfigError reports whether err is a source set up wrongly by the
// command line.
func isConfigError(err error) bool { return errors.Is(err, membership.ErrBadConfig) }
