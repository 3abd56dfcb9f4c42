package proxy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/kolco-dev/kolco/fleet"
	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/gossip"
)

// source joins the gossip pool g describes as an observer, with the key
// file taken from dir when relative, and returns what leaves it. The
// error is a [*ConfigError] for the pool's membership key: a key file
// that cannot be read or holds no valid key, an address in use. With
// inUse, an address it reports in use is taken for the member this one
// replaces (see joiningGossip), which frees it when it leaves.
func (g *GossipMembership) source(pool, dir string, inUse func(addr string) bool) (membership.Source, func() error, error) {
	bad := func(err error) error { return &ConfigError{Pool: pool, Key: "membership", Err: err} }
	cfg := gossip.Config{Name: g.Name, Bind: g.Bind, Advertise: g.Advertise, Seeds: g.Seeds, Label: g.Label,
		ProbeInterval: g.ProbeInterval, ProbeTimeout: g.ProbeTimeout, GossipInterval: g.GossipInterval,
		SuspicionMult: g.SuspicionMult}
	if g.KeyFile != "" {
		data, err := os.ReadFile(inDir(dir, g.KeyFile))
		if err != nil {
			return nil, nil, bad(err)
		}
		if cfg.Keys, err = gossip.ParseKeys(data); err != nil {
			return nil, nil, bad(err)
		}
	}
	if inUse != nil && inUse(g.Bind) {
		j := &joiningGossip{cfg: cfg, inUse: inUse}
		return j, j.Close, nil
	}
	p, err := gossip.Join(cfg)
	if err != nil {
		return nil, nil, bad(err)
	}
	return p, p.Close, nil
}

// joiningGossip is the source of a gossip member whose address the member
// it replaces still holds: that of the process this one took over from
// (SIGUSR2), or of the source a reload retires. It joins once the address
// is free, which the other member's leaving makes it within moments; until
// then the view is stale and says why, and the pool serves the nodes the
// replaced member served.
type joiningGossip struct {
	cfg gossip.Config
	// inUse reports whether another socket holds the address (the server
	// probes it: only the server wing opens sockets).
	inUse func(addr string) bool

	mu     sync.Mutex
	p      *gossip.Pool
	closed bool
}

// Unordered implements [membership.Unordered], as the pool it joins does.
func (j *joiningGossip) Unordered() string { return (*gossip.Pool)(nil).Unordered() }

// Read returns the pool's view once Follow has joined it.
func (j *joiningGossip) Read(ctx context.Context) (membership.Version, error) {
	j.mu.Lock()
	closed, p := j.closed, j.p
	j.mu.Unlock()
	switch {
	case closed:
		return membership.Version{}, gossip.ErrClosed
	case p == nil:
		return membership.Version{}, fmt.Errorf("%w: gossip: not joined yet at %s", membership.ErrUnreachable, j.cfg.Bind)
	}
	return p.Read(ctx)
}

// Follow joins as soon as the address is free, trying every 100 ms and
// reporting the view stale meanwhile, then follows the pool.
func (j *joiningGossip) Follow(ctx context.Context, r membership.Reporter) error {
	t := time.NewTicker(joinRetry)
	defer t.Stop()
	for {
		p, err := j.join()
		if p != nil {
			return p.Follow(ctx, r)
		}
		if errors.Is(err, gossip.ErrClosed) {
			return err
		}
		r.Failed(err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// joinRetry is how often a joiningGossip tries its address.
const joinRetry = 100 * time.Millisecond

// join returns the pool, joining it if the address is free. The error
// wraps membership.ErrUnreachable while it is not, or is gossip.ErrClosed.
// Only Follow joins; Read and Close do not wait for a join under way.
func (j *joiningGossip) join() (*gossip.Pool, error) {
	j.mu.Lock()
	closed, p := j.closed, j.p
	j.mu.Unlock()
	switch {
	case closed:
		return nil, gossip.ErrClosed
	case p != nil:
		return p, nil
	case j.inUse(j.cfg.Bind):
		return nil, fmt.Errorf("%w: gossip: %s is held by another socket (the member this one replaces, until it leaves); joining once it is free", membership.ErrUnreachable, j.cfg.Bind)
	}
	p, err := gossip.Join(j.cfg) // seeds answer within memberlist's timeouts
	if err != nil {
		return nil, fmt.Errorf("%w: gossip: %w", membership.ErrUnreachable, err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		_ = p.Close()
		return nil, gossip.ErrClosed
	}
	j.p = p
	return p, nil
}

// Close leaves the pool if it was joined.
func (j *joiningGossip) Close() error {
	j.mu.Lock()
	j.closed = true
	p := j.p
	j.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.Close()
}

// gossipStatus is a gossip pool's source, joined or joining: what the
// admin endpoint reports of the pool (see gossipWire).
type gossipStatus interface{ Status() gossip.Status }

// Status returns the pool's status once joined; until then, that the
// member waits for its address.
func (j *joiningGossip) Status() gossip.Status {
	j.mu.Lock()
	p := j.p
	j.mu.Unlock()
	if p == nil {
		return gossip.Status{Alone: true, JoinError: "not joined yet: " + j.cfg.Bind + " is held by the member this one replaces"}
	}
	return p.Status()
}

// gossipWire returns st as the admin endpoint reports it.
func gossipWire(st gossip.Status) *fleet.GossipStatus {
	w := &fleet.GossipStatus{Member: st.Name, Addr: st.Addr, Alone: st.Alone, JoinError: st.JoinError, Health: st.Health,
		Suspected: st.Suspected, Refuted: st.Refuted, Deaths: st.Deaths, Returns: st.Returns,
		Nodes: []fleet.GossipMember{}, Observers: []fleet.GossipMember{}}
	if !st.LastDeath.IsZero() {
		w.LastDeath = &st.LastDeath
	}
	for _, m := range st.Members {
		gm := fleet.GossipMember{Name: m.Name, Addr: m.Addr, Drained: m.Drained, Suspect: m.Suspect}
		if m.Role == gossip.RoleNode {
			w.Nodes = append(w.Nodes, gm)
		} else {
			w.Observers = append(w.Observers, gm)
		}
		if m.Suspect {
			w.Suspects = append(w.Suspects, m.Name)
		}
	}
	return w
}
