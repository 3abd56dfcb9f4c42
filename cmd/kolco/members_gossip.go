package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kolco-dev/kolco/membership/gossip"
)

// gossipFlags say how to join a gossip pool instead of using etcd.
type gossipFlags struct {
	bind      string
	seeds     []string
	keyFile   string
	label     string
	probe     time.Duration
	suspicion int
}

// gossipFlagNames are the flags below, refused without --gossip.
var gossipFlagNames = []string{"seed", "key-file", "label", "probe-interval", "suspicion-mult"}

func (g *gossipFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&g.bind, "gossip", "", "join a gossip pool, listening on this host:port (UDP and TCP), instead of using etcd")
	fs.StringSliceVar(&g.seeds, "seed", nil, "a member of the gossip pool to join through (host:port; repeat or comma-separate)")
	fs.StringVar(&g.keyFile, "key-file", "", "file of base64 keys encrypting the gossip, the one in use first")
	fs.StringVar(&g.label, "label", "", "the gossip pool's label, keeping pools on one network apart")
	fs.DurationVar(&g.probe, "probe-interval", gossip.DefaultProbeInterval,
		"how often a member probes another; probes time out at half of it and gossip goes out at a fifth (give every member of the pool the same)")
	fs.IntVar(&g.suspicion, "suspicion-mult", gossip.DefaultSuspicionMult,
		"probe intervals a suspect has to answer before it is declared dead (give every member of the pool the same)")
}

// config returns the pool configuration the flags describe, for a member
// carrying meta. Mistakes in the flags are usage errors; a key file that
// cannot be read is not.
func (g *gossipFlags) config(cmd *cobra.Command, meta gossip.Meta) (gossip.Config, error) {
	fs := cmd.Flags()
	for _, name := range etcdFlagNames {
		if fs.Changed(name) {
			return gossip.Config{}, usagef("--%s applies to etcd, not to --gossip", name)
		}
	}
	if g.probe <= 0 {
		return gossip.Config{}, usagef("--probe-interval must be positive (got %v)", g.probe)
	}
	if g.suspicion <= 0 {
		return gossip.Config{}, usagef("--suspicion-mult must be positive (got %d)", g.suspicion)
	}
	cfg := gossip.Config{Bind: g.bind, Seeds: g.seeds, Label: g.label, Meta: meta, SuspicionMult: g.suspicion,
		ProbeInterval: g.probe, ProbeTimeout: g.probe / 2, GossipInterval: g.probe / 5, RejoinInterval: g.probe}
	if g.keyFile != "" {
		data, err := os.ReadFile(g.keyFile)
		if err != nil {
			return gossip.Config{}, err
		}
		if cfg.Keys, err = gossip.ParseKeys(data); err != nil {
			return gossip.Config{}, usageError{fmt.Errorf("--key-file: %w", err)}
		}
	}
	return cfg, nil
}

// refuseGossipFlags refuses the gossip flags without --gossip.
func refuseGossipFlags(cmd *cobra.Command) error {
	for _, name := range gossipFlagNames {
		if cmd.Flags().Changed(name) {
			return usagef("--%s applies to --gossip", name)
		}
	}
	return nil
}

// join joins the pool cfg describes; a bad configuration is a usage
// error.
func joinGossip(cfg gossip.Config) (*gossip.Pool, error) {
	p, err := gossip.Join(cfg)
	if isConfigError(err) {
		return nil, usageError{err}
	}
	return p, err
}

// registerGossip joins the gossip pool as the node, holds it there until
// ctx is done, then leaves gracefully. It says it registered only once it
// has joined (at once for a first member, which has no seeds); a member
// the seeds refuse before it ever joined - another key file or label -
// cannot join, and ends with an error. Killed, the node is dropped by the
// failure detector.
func registerGossip(ctx context.Context, cmd *cobra.Command, cfg gossip.Config) error {
	p, err := joinGossip(cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	if err := waitJoined(ctx, cmd, p); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return nil
	}
	lo, hi := cfg.FailureTimeout(p.Members())
	fmt.Fprintf(cmd.OutOrStdout(), "registered %s at %s in the gossip pool as %s (gossip at %s, %d members); a member found dead is dropped %v..%v after it is suspected; holding until stopped\n",
		cfg.Meta.Node.ID, cfg.Meta.Node.Addr, p.Name(), p.Addr(), p.Members(), lo, hi)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last := ""
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
			continue
		case <-tick.C:
		}
		msg := "in the pool again"
		if _, err := p.Read(ctx); err != nil {
			msg = "out of the pool: " + err.Error()
		}
		if msg != last && (last != "" || msg != "in the pool again") {
			fmt.Fprintf(cmd.ErrOrStderr(), "kolco: gossip: %s (%d members)\n", msg, p.Members())
		}
		last = msg
	}
	if err := p.Close(); err != nil {
		return fmt.Errorf("%s is dropped when found dead: %w", cfg.Meta.Node.ID, err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "left the gossip pool: deregistered %s\n", cfg.Meta.Node.ID)
	return nil
}

// waitJoined waits until p has joined its pool or ctx is done, printing
// each new reason to wait on stderr. The error says why p cannot join:
// the seeds answer and refuse it.
func waitJoined(ctx context.Context, cmd *cobra.Command, p *gossip.Pool) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last := ""
	for {
		_, err := p.Read(ctx)
		switch {
		case err == nil || ctx.Err() != nil:
			return nil
		case errors.Is(err, gossip.ErrRefused):
			return fmt.Errorf("cannot join the gossip pool: %w", p.JoinError())
		case err.Error() != last:
			fmt.Fprintf(cmd.ErrOrStderr(), "kolco: gossip: waiting to join: %v\n", err)
			last = err.Error()
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// listGossip joins the pool as an observer, lists the node members it
// sees, then leaves. A seed that does not answer, or answers and refuses
// the member (another key file or label), fails it at once; a seed that
// has not joined its own pool yet is waited for, a few probe intervals.
func listGossip(ctx context.Context, cfg gossip.Config) (listResult, error) {
	if len(cfg.Seeds) == 0 {
		return listResult{}, usagef("--gossip needs --seed: a member of the pool to join through")
	}
	p, err := joinGossip(cfg)
	if err != nil {
		return listResult{}, err
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*cfg.ProbeInterval+5*time.Second)
	defer cancel()
	for {
		v, err := p.Read(ctx)
		switch {
		case err == nil:
			out := fromVersion(fmt.Sprintf("gossip via %s (%d members)", cfg.Seeds[0], p.Members()), v)
			out.Revision = 0 // local to this short-lived member: nothing to compare
			return listResult{out: out}, nil
		case errors.Is(err, gossip.ErrRefused):
			return listResult{}, fmt.Errorf("cannot join the gossip pool: %w", p.JoinError())
		case p.Members() <= 1:
			return listResult{}, fmt.Errorf("no member answered: %w", err)
		}
		t := time.NewTimer(cfg.ProbeInterval / 2)
		select {
		case <-ctx.Done():
			t.Stop()
			return listResult{}, fmt.Errorf("gossip: no member in the pool answered: %w", err)
		case <-t.C:
		}
	}
}
