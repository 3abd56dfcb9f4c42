package membership

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/keyhash"
)

// FollowConfig says which placement a [Follower] keeps.
type FollowConfig struct {
	// Algorithm names the placement algorithm, as package algo names it
	// ("ring", "jump", ...). Required.
	Algorithm string
	// Options are the algorithm's options. The key hash must be one of
	// package keyhash's, named, so that the placement has a fingerprint.
	Options algo.Options
	// Initial are the nodes placed before the source's first version:
	// a static default, such as the servers a configuration file lists.
	// The first version is applied to them as a change. Nil means no
	// nodes: lookups fail with kolco.ErrNoNodes until the first version.
	Initial []kolco.Node
	// InitialState, when set, is the state (algo.State) of the placement
	// over Initial that a history-dependent algorithm restores rather
	// than builds afresh: a follower started again from the placement it
	// served before, which a fresh one over the same nodes may not be.
	InitialState []byte
	// WriteState makes the follower write the placement state back to
	// the store when the algorithm is history-dependent and the store
	// holds none, or one behind its nodes (a change was made without
	// computing it, such as a lease expiring); the write is guarded by
	// the revision, so of followers racing to write, one wins and the
	// others see its state in the next version. It needs a source that
	// implements [StateWriter] (package membership/etcd's store). Off by
	// default: writers of membership keep the state current themselves,
	// and a follower may have read-only access.
	WriteState bool
	// OnChange, when set, is called on the follower's goroutine after
	// each new view is published, with the view it replaced: a proxy
	// starts moving keys here. The follower takes no new version until
	// it returns.
	OnChange func(prev, next *View)
}

// StateWriter is implemented by sources that can store a placement state
// beside their nodes: package membership/etcd's store.
type StateWriter interface {
	// WriteState stores state (a [PlacementState]'s encoding) as of
	// revision, only if nothing in the membership changed after it. The
	// error wraps [ErrConflict] when something did, and nothing was
	// written.
	WriteState(ctx context.Context, revision int64, state []byte) error
}

// Follower keeps a placement in step with a [Source]: it applies each new
// version to its placement as a change (kolco.Diff from the nodes it
// places to the version's, through kolco.Mutable, so that minimal
// disruption holds: a change never rebuilds the placement) and publishes
// the result as a new [View] with one atomic pointer swap. Readers take
// the view, or the placement, without a lock and never see half a change.
//
// For a history-dependent algorithm the placement at a version is the one
// the store's [PlacementState] describes, which is what a follower that
// applied every change has; one that did not (started later, cut off
// during changes, or after a full re-read) takes the store's, so that
// every follower of the store places alike at the same revision. Without a
// stored state a follower places by its own history, and one started
// later may place keys differently; [View].Shared says which.
//
// Each view holds a placement of its own, a copy of the one before
// changed by the version: readers of an older view keep placing by it.
// (For bounded, whose Acquire and Release count live loads, each view's
// counts start afresh.)
//
// A follower owns a goroutine, and the [Watcher] it reads the source
// with, from [Follow] until [Follower.Close].
type Follower struct {
	cfg    FollowConfig
	hist   bool
	writer StateWriter // nil unless cfg.WriteState
	w      *Watcher
	view   atomic.Pointer[View]
	down   atomic.Pointer[[]string]
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex // guards the counters and errors below
	refused  error      // why the last version was not applied; nil once one is
	writeErr error      // the last state write's failure, nil after a success
	adopted  int64      // views that took the store's state over the applied change
	written  int64      // states written back
}

// Follow starts following src with the placement cfg describes. The
// follower runs until Close is called or ctx is done; Close must be called
// to release it either way. The error wraps [ErrBadConfig] for an
// algorithm package algo does not know, a key hash without a name,
// WriteState with a source that cannot write, or a history-dependent
// algorithm on an [Unordered] source (wrapping [ErrUnordered] too); or is
// the algorithm's error for the Initial nodes.
func Follow(ctx context.Context, src Source, cfg FollowConfig) (*Follower, error) {
	info, ok := algo.Lookup(cfg.Algorithm)
	if !ok {
		return nil, fmt.Errorf("%w: follow: unknown algorithm %q", ErrBadConfig, cfg.Algorithm)
	}
	cfg.Algorithm = info.Name
	if h := cfg.Options.Hash; h != nil {
		if _, named := keyhash.Name(h); !named {
			// Checked here: a placement of fewer than two nodes would
			// not show it until later.
			return nil, fmt.Errorf("%w: follow: a key hash without a name has no fingerprint: use one of package keyhash's", ErrBadConfig)
		}
	}
	if u, ok := src.(Unordered); ok && info.HistoryDependent {
		return nil, fmt.Errorf("%w: %w: follow: %s is history-dependent: %s", ErrBadConfig, ErrUnordered, info.Name, u.Unordered())
	}
	f := &Follower{cfg: cfg, hist: info.HistoryDependent, done: make(chan struct{})}
	if cfg.WriteState {
		sw, ok := src.(StateWriter)
		if !ok {
			return nil, fmt.Errorf("%w: follow: WriteState with a source that cannot write (%T)", ErrBadConfig, src)
		}
		f.writer = sw
	}
	p, err := initialPlacement(cfg, info.HistoryDependent)
	if err != nil {
		return nil, fmt.Errorf("follow: the initial nodes: %w", err)
	}
	first, err := f.newView(p, Version{Nodes: p.Nodes()}, !f.hist)
	if err != nil {
		return nil, fmt.Errorf("%w: follow: %w", ErrBadConfig, err)
	}
	f.view.Store(first)
	f.down.Store(&[]string{})
	ctx, f.cancel = context.WithCancel(ctx)
	f.w = Watch(ctx, src)
	go f.run(ctx)
	return f, nil
}

// initialPlacement returns the placement over cfg's Initial nodes:
// restored from InitialState for a history-dependent algorithm.
func initialPlacement(cfg FollowConfig, hist bool) (algo.Placement, error) {
	if hist && cfg.InitialState != nil {
		return algo.Restore(cfg.Algorithm, cfg.Initial, cfg.Options, cfg.InitialState)
	}
	return algo.New(cfg.Algorithm, cfg.Initial, cfg.Options)
}

// run applies each version the watcher hands on, until the watcher stops.
func (f *Follower) run(ctx context.Context) {
	defer close(f.done)
	for v := range f.w.Versions() {
		f.applyVersion(ctx, v)
	}
}

// applyVersion applies v and publishes the result, or records why it cannot.
func (f *Follower) applyVersion(ctx context.Context, v Version) {
	prev := f.view.Load()
	next, adopted, behind, err := f.build(prev, v)
	if err != nil {
		f.mu.Lock()
		f.refused = fmt.Errorf("revision %d not applied: %w", v.Revision, err)
		f.mu.Unlock()
		return
	}
	f.mu.Lock()
	f.refused = nil
	if adopted {
		f.adopted++
	}
	f.mu.Unlock()
	f.view.Store(next)
	close(prev.replaced)
	if f.cfg.OnChange != nil {
		f.cfg.OnChange(prev, next)
	}
	if behind && f.writer != nil {
		f.writeBack(ctx, next)
	}
}

// build returns the view of v: the change from prev's nodes to v's applied
// to a copy of prev's placement, or, for a history-dependent algorithm
// whose state the store keeps, the stored placement when the change does
// not give it, or cannot be made (adopted). behind reports a
// history-dependent placement whose stored state is missing or behind v's
// nodes.
func (f *Follower) build(prev *View, v Version) (view *View, adopted, behind bool, err error) {
	p, applyErr := f.apply(prev.Placement, v.Nodes)
	if !f.hist || v.State == nil {
		if applyErr != nil {
			return nil, false, false, applyErr
		}
		view, err = f.newView(p, v, !f.hist)
		return view, false, f.hist, err
	}
	ps, err := ParsePlacementState(v.State)
	if err != nil {
		return nil, false, false, err
	}
	if ps.Algorithm != f.cfg.Algorithm {
		return nil, false, false, fmt.Errorf("%w: the store keeps the state of %s, this follower places with %s", ErrBadConfig, ps.Algorithm, f.cfg.Algorithm)
	}
	stored, err := ps.Placement(v.Nodes, f.cfg.Options)
	if err != nil {
		return nil, false, false, err
	}
	if view, err = f.newView(stored, v, true); err != nil {
		return nil, false, false, err
	}
	behind = !ps.Current(v.Nodes)
	if applyErr == nil {
		if fp, err := kolco.Fingerprint(p); err == nil && fp == view.Fingerprint {
			view.Placement = p // the change gives the stored placement: keep the applied one
			return view, false, behind, nil
		}
	}
	return view, true, behind, nil
}

// apply returns a copy of p changed to nodes. The copy is restored from
// p's state, so it places as p does; readers of the view that holds p
// keep it unchanged.
func (f *Follower) apply(p algo.Placement, nodes []kolco.Node) (algo.Placement, error) {
	c, err := algo.Restore(f.cfg.Algorithm, p.Nodes(), f.cfg.Options, algo.State(p))
	if err != nil {
		return nil, fmt.Errorf("copying the placement: %w", err)
	}
	if err := c.Apply(kolco.Diff(c.Nodes(), nodes)); err != nil {
		return nil, err
	}
	return c, nil
}

// newView returns the view of p at v.
func (f *Follower) newView(p algo.Placement, v Version, shared bool) (*View, error) {
	fp, err := kolco.Fingerprint(p)
	if err != nil {
		return nil, err
	}
	return &View{
		Placement:   p,
		Revision:    v.Revision,
		Fingerprint: fp,
		Nodes:       slices.Clone(v.Nodes),
		Drained:     slices.Clone(v.Drained),
		AppliedAt:   time.Now(),
		Shared:      shared,
		replaced:    make(chan struct{}),
	}, nil
}

// writeBack stores the state of view's placement as of its revision. A
// conflict means another writer came first; its write is the next version.
func (f *Follower) writeBack(ctx context.Context, view *View) {
	err := f.writer.WriteState(ctx, view.Revision, StateOf(f.cfg.Algorithm, view.Placement).Marshal())
	if errors.Is(err, ErrConflict) || ctx.Err() != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writeErr = err
	if err == nil {
		f.written++
	}
}

// View returns the current view. It takes no lock.
func (f *Follower) View() *View { return f.view.Load() }

// Placement returns the current placement. It takes no lock; a caller
// that needs the placement and its nodes or revision together takes the
// [View] instead.
func (f *Follower) Placement() algo.Placement { return f.view.Load().Placement }

// Err returns why the follower did not apply the last version it took
// (its state or nodes refused, wrapping [ErrBadContent], [ErrBadConfig]
// or the algorithm's error), or nil when it applied it. While it is not
// nil the follower keeps its view and reports it stale.
func (f *Follower) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refused
}

// Status returns the status of the follower's watch of its source.
func (f *Follower) Status() Status { return f.w.Status() }

// WaitRevision waits until the follower has applied a version of revision
// rev or later and returns its view. It returns the current view with
// ctx's error when ctx is done first, or with [ErrStopped] when the
// follower stops first.
func (f *Follower) WaitRevision(ctx context.Context, rev int64) (*View, error) {
	for {
		v := f.view.Load()
		if v.Revision >= rev {
			return v, nil
		}
		select {
		case <-v.replaced:
		case <-ctx.Done():
			return v, ctx.Err()
		case <-f.done:
			if v := f.view.Load(); v.Revision >= rev {
				return v, nil
			}
			return f.view.Load(), ErrStopped
		}
	}
}

// SetDown records the IDs of the nodes this process treats as down (its
// local health), for [Follower.Report]. It does not change the
// placement or its fingerprint: health is local, membership is shared.
func (f *Follower) SetDown(ids ...string) {
	down := slices.Clone(ids)
	slices.Sort(down)
	down = slices.Compact(down)
	f.down.Store(&down)
}

// Done returns a channel closed when the follower has stopped.
func (f *Follower) Done() <-chan struct{} { return f.done }

// Close stops the follower and waits for its goroutine and its watcher to
// end. It returns the error that stopped the source before Close, if any,
// as [Watcher.Close] does. The last view stays readable.
func (f *Follower) Close() error {
	f.cancel()
	<-f.done
	return f.w.Close()
}
