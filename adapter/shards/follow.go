package shards

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership"
)

// ErrStopped is returned by [Follow] when the source stops before it
// yields a first version, with the source's error when it gave one.
var ErrStopped = errors.New("shards: membership source stopped before its first version")

// Follower is a placement with a value per node that follows a membership
// source, from [Follow] until [Follower.Close].
//
// For kolco's algorithms it is a membership.Follower, whose views it
// tables: each version is applied as a change to a copy of the placement,
// and for a history-dependent algorithm whose store keeps the placement
// state (membership.PlacementState) the placement is the store's, so that
// every process following the store places alike however late it started.
// For ketama and modula each version's servers are placed anew, as
// nutcracker places them.
type Follower[T any] struct {
	Current[T]
	cfg      Config
	value    func(kolco.Node) (T, error)
	onChange func(*Table[T])

	mf   *membership.Follower // kolco's algorithms
	w    *membership.Watcher  // ketama and modula
	done chan struct{}        // closed when the ketama and modula loop ends

	mu  sync.Mutex // serializes tabling; guards err
	err error      // why the last version was not tabled
}

// Follow follows src with the placement cfg describes, each node's value
// made by value once per change that adds or readdresses it, and returns
// once the first version is placed. onChange, when not nil, is called
// after each later version is published, on the follower's goroutine. ctx
// bounds the wait for the first version only; following goes on until
// Close. A version that cannot be placed leaves the last one in place and
// is reported by [Follower.Err]. Zones do not order a follower's
// preference lists. The error wraps [ErrBadConfig], ctx's error, or
// [ErrStopped].
func Follow[T any](ctx context.Context, src membership.Source, cfg Config, value func(kolco.Node) (T, error), onChange func(*Table[T])) (*Follower[T], error) {
	opts, err := cfg.options(nil)
	if err != nil {
		return nil, err
	}
	f := &Follower[T]{cfg: cfg, value: value}
	if cfg.twemproxy() {
		if err := f.followList(ctx, src); err != nil {
			return nil, err
		}
		f.onChange = onChange
		go f.runList()
		return f, nil
	}
	f.mf, err = membership.Follow(context.WithoutCancel(ctx), src, membership.FollowConfig{
		Algorithm: cfg.distribution(), Options: opts, OnChange: f.viewChanged})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	view, err := f.mf.WaitRevision(ctx, 1)
	if err != nil {
		if errors.Is(err, membership.ErrStopped) {
			err = fmt.Errorf("%w: %w", ErrStopped, f.mf.Close())
		} else {
			f.mf.Close()
		}
		return nil, err
	}
	f.mu.Lock()
	if f.table.Load() == nil { // the follower's goroutine has not tabled it yet
		f.tableView(view)
	}
	tabled := f.table.Load() != nil
	f.mu.Unlock()
	if !tabled {
		f.mf.Close()
		return nil, f.Err()
	}
	f.mu.Lock()
	f.onChange = onChange
	f.mu.Unlock()
	return f, nil
}

// viewChanged tables a new view of the membership follower.
func (f *Follower[T]) viewChanged(_, next *membership.View) {
	f.mu.Lock()
	f.tableView(next)
	onChange, t, err := f.onChange, f.table.Load(), f.err
	f.mu.Unlock()
	if onChange != nil && err == nil {
		onChange(t)
	}
}

// tableView publishes the table of view; f.mu is held.
func (f *Follower[T]) tableView(view *membership.View) {
	t, err := tableOf(f.cfg, view.Placement, view.Nodes, f.table.Load(), f.value)
	if err != nil {
		f.err = fmt.Errorf("revision %d: %w", view.Revision, err)
		return
	}
	f.err = nil
	f.table.Store(t)
}

// followList waits for the first version of src and tables it, for ketama
// and modula.
func (f *Follower[T]) followList(ctx context.Context, src membership.Source) error {
	f.w = membership.Watch(context.WithoutCancel(ctx), src)
	f.done = make(chan struct{})
	select {
	case v, ok := <-f.w.Versions():
		if !ok {
			close(f.done)
			return fmt.Errorf("%w: %w", ErrStopped, f.w.Close())
		}
		t, err := tableOf[T](f.cfg, nil, v.Nodes, nil, f.value)
		if err != nil {
			close(f.done)
			f.w.Close()
			return fmt.Errorf("revision %d: %w", v.Revision, err)
		}
		f.table.Store(t)
		return nil
	case <-ctx.Done():
		close(f.done)
		f.w.Close()
		return ctx.Err()
	}
}

// runList places each later version of the watcher anew.
func (f *Follower[T]) runList() {
	defer close(f.done)
	for v := range f.w.Versions() {
		t, err := tableOf(f.cfg, nil, v.Nodes, f.table.Load(), f.value)
		f.mu.Lock()
		if err != nil {
			f.err = fmt.Errorf("revision %d: %w", v.Revision, err)
		} else {
			f.err = nil
			f.table.Store(t)
		}
		f.mu.Unlock()
		if err == nil && f.onChange != nil {
			f.onChange(t)
		}
	}
}

// Err returns why the last version yielded was not placed, or nil when it
// was.
func (f *Follower[T]) Err() error {
	f.mu.Lock()
	err := f.err
	f.mu.Unlock()
	if err == nil && f.mf != nil {
		err = f.mf.Err()
	}
	return err
}

// Status returns what the watch knows about how current its view of the
// source is.
func (f *Follower[T]) Status() membership.Status {
	if f.mf != nil {
		return f.mf.Status()
	}
	return f.w.Status()
}

// Close stops following and waits until the follower's goroutine has
// ended; the placement keeps its last version. It returns the error that
// stopped the source before, if any.
func (f *Follower[T]) Close() error {
	if f.mf != nil {
		return f.mf.Close()
	}
	err := f.w.Close()
	<-f.done
	return err
}
