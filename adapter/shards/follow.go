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

// Follower is a [Live] placement that follows a membership source, from
// [Follow] until [Follower.Close].
type Follower[T any] struct {
	*Live[T]
	w        *membership.Watcher
	onChange func(*Table[T])
	done     chan struct{}

	mu  sync.Mutex // guards err
	err error
}

// Follow watches src, builds the placement from its first version (restored
// from the version's history state, if any) and then applies each later
// version as the change from the one before ([Live.Update]), in a goroutine
// of its own, until Close. onChange, when not nil, is called after each
// later version is published, from that goroutine. ctx bounds the wait
// for the first version only; following goes on until Close. A version
// that cannot be applied leaves the last one in place and is reported by
// [Follower.Err]. The error wraps ctx's error, [ErrStopped], or New's
// errors for the first version.
func Follow[T any](ctx context.Context, src membership.Source, cfg Config, value func(kolco.Node) (T, error), onChange func(*Table[T])) (*Follower[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := membership.Watch(context.WithoutCancel(ctx), src)
	var v membership.Version
	select {
	case got, ok := <-w.Versions():
		if !ok {
			err := w.Close()
			if err == nil {
				err = w.Status().Err
			}
			return nil, fmt.Errorf("%w: %w", ErrStopped, err)
		}
		v = got
	case <-ctx.Done():
		w.Close()
		return nil, ctx.Err()
	}
	l, err := Restore(cfg, v.Nodes, v.State, value)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("%s: %w", v, err)
	}
	f := &Follower[T]{Live: l, w: w, onChange: onChange, done: make(chan struct{})}
	go f.run()
	return f, nil
}

func (f *Follower[T]) run() {
	defer close(f.done)
	for v := range f.w.Versions() {
		err := f.Update(v.Nodes, v.State)
		if err != nil {
			err = fmt.Errorf("%s: %w", v, err)
		}
		f.mu.Lock()
		f.err = err
		f.mu.Unlock()
		if err == nil && f.onChange != nil {
			f.onChange(f.Table())
		}
	}
}

// Err returns why the last version yielded was not applied, or nil when
// it was.
func (f *Follower[T]) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Status returns what the watcher knows about how current its view of the
// source is.
func (f *Follower[T]) Status() membership.Status { return f.w.Status() }

// Close stops following and waits until the follower's goroutine has
// ended; the placement keeps its last version. It returns the error that
// stopped the source before, if any.
func (f *Follower[T]) Close() error {
	err := f.w.Close()
	<-f.done
	return err
}
