package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/etcd"
	"github.com/kolco-dev/kolco/membership/gossip"
)

func newMembersRegisterCmd(ef *etcdFlags) *cobra.Command {
	var nf nodeFlags
	var ttl time.Duration
	var gf gossipFlags
	var drained bool
	cmd := &cobra.Command{
		Use:   "register (--ttl DURATION | --gossip HOST:PORT [--seed HOST:PORT]) NAME ADDR",
		Short: "Keep a node registered while this command runs (a sidecar)",
		Long: `Register a node under an etcd lease and keep renewing the lease until
stopped: a sidecar for a server that cannot register itself, such as
memcached. Stopped by SIGTERM or an interrupt, it removes the node at once;
killed, or cut off from etcd, it stops renewing and the node leaves when the
lease expires, within --ttl. If the lease is lost while etcd is away, the
node is registered again when etcd is back; a node drained by an operator
stays drained.

With --gossip, the node joins a gossip pool instead (package
membership/gossip): it gossips on the address given, joins through --seed
(the first member of a pool has none), and carries its name, address,
weight and zone to the other members (--drained: listed, taking no keys).
It says it registered once it has joined; seeds that answer but refuse it
(another --key-file or --label than theirs) end it with exit status 1.
Stopped, it leaves the pool at once; killed or cut off, the failure
detector drops it some seconds later (--probe-interval, --suspicion-mult:
give every member of the pool the same).

  kolco members --prefix /kolco/cache/ register --ttl 10s mc-1 10.0.0.9:11211
  kolco members register --gossip 10.0.0.9:7946 --seed 10.0.0.8:7946 --key-file gossip.keys mc-1 10.0.0.9:11211`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if gf.bind != "" {
				return registerGossipCmd(cmd, &gf, &nf, drained, args[0], args[1])
			}
			if err := refuseGossipFlags(cmd); err != nil {
				return err
			}
			if drained {
				return usagef("--drained applies to --gossip: in etcd, drain with \"kolco members drain\"")
			}
			if ttl < time.Second {
				return usagef("--ttl must be at least 1s (got %v)", ttl)
			}
			node, err := nf.node(args[0], args[1])
			if err != nil {
				return err
			}
			s, err := ef.store()
			if err != nil {
				return err
			}
			defer s.Close()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			reg, err := waitForEtcd(ctx, cmd, func() (*etcd.Registration, error) {
				return s.Register(ctx, node, ttl)
			})
			if errors.Is(err, errStopped) {
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "registered %s at %s under lease %x (TTL %v); renewing until stopped\n",
				node.ID, node.Addr, reg.Status().Lease, ttl.Round(time.Second))
			if err := reportRegistration(ctx, cmd, reg); err != nil {
				return err
			}
			closing, cancel := context.WithTimeout(context.WithoutCancel(ctx), ef.timeout)
			defer cancel()
			if err := reg.Close(closing); err != nil {
				return fmt.Errorf("%s stays until its lease expires: %w", node.ID, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deregistered %s\n", node.ID)
			return nil
		},
	}
	nf.register(cmd.Flags())
	gf.register(cmd.Flags())
	cmd.Flags().BoolVar(&drained, "drained", false, "with --gossip: register the node drained, listed but taking no keys")
	cmd.Flags().DurationVar(&ttl, "ttl", 10*time.Second, "lease TTL: how long the node stays after renewals stop (whole seconds)")
	return cmd
}

// registerGossipCmd registers the node id at addr in a gossip pool until
// a signal stops it.
func registerGossipCmd(cmd *cobra.Command, gf *gossipFlags, nf *nodeFlags, drained bool, id, addr string) error {
	if cmd.Flags().Changed("ttl") {
		return usagef("--ttl applies to etcd: a gossip member stays while it answers probes")
	}
	node, err := nf.node(id, addr)
	if err != nil {
		return err
	}
	cfg, err := gf.config(cmd, gossip.Meta{Role: gossip.RoleNode, Node: node, Drained: drained})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return registerGossip(ctx, cmd, cfg)
}

// reportRegistration prints each change of the registration's health on
// stderr until ctx is done, or returns why the registration ended by
// itself.
func reportRegistration(ctx context.Context, cmd *cobra.Command, reg *etcd.Registration) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last error
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-reg.Done():
			if ctx.Err() == nil {
				return fmt.Errorf("registration ended: %w", reg.Status().Err)
			}
			return nil
		case <-tick.C:
		}
		err := reg.Status().Err
		switch {
		case err != nil && (last == nil || err.Error() != last.Error()):
			fmt.Fprintf(cmd.ErrOrStderr(), "kolco: registration lost: %v\n", err)
		case err == nil && last != nil:
			fmt.Fprintf(cmd.ErrOrStderr(), "kolco: registered again under lease %x\n", reg.Status().Lease)
		}
		last = err
	}
}

// errStopped marks the end of a wait by a signal: not a failure.
var errStopped = errors.New("stopped")

// waitForEtcd calls try until it succeeds, fails for a reason other than
// etcd being away, or ctx is done (errStopped); each new reason to wait
// is printed on stderr.
func waitForEtcd[T any](ctx context.Context, cmd *cobra.Command, try func() (T, error)) (T, error) {
	last := ""
	for {
		v, err := try()
		if err == nil || !errors.Is(err, membership.ErrUnreachable) {
			return v, err
		}
		if msg := err.Error(); msg != last {
			fmt.Fprintf(cmd.ErrOrStderr(), "kolco: waiting for etcd: %s\n", msg)
			last = msg
		}
		t := time.NewTimer(time.Second)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return v, errStopped
		}
	}
}
