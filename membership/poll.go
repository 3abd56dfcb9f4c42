package membership

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/kolco-dev/kolco"
)

// Poll is the Follow of a source that can only be asked, not watched: a
// DNS name, a set of Sentinels, a service registry's HTTP API. It asks
// every Interval, and at once (at most every MinGap) when Nudge delivers,
// and reports each answer that differs from the last one taken as the
// next version, numbered from 1. After a failure to ask it asks again
// sooner than Interval: Retry later, twice that after a second failure in
// a row, and so on up to Interval - so that a source asked every minute
// and out of reach for a moment (its first asking at a proxy's start
// included) is not out of reach for a minute.
type Poll struct {
	// Ask returns the node set now, sorted with SortNodes. Its error
	// wraps ErrBadContent for an answer the source refuses, which leaves
	// the view stale as an answer; any other error is a failure to ask.
	Ask func(ctx context.Context) ([]kolco.Node, error)
	// Interval is the time between two askings.
	Interval time.Duration
	// Nudge, when not nil, asks again before Interval ends: for a
	// follower that learns the set may have changed (a server stopped
	// answering, or answered as a replica).
	Nudge <-chan struct{}
	// MinGap is the least time between two askings a nudge brings:
	// nudges may come with every failed request.
	MinGap time.Duration
	// Retry is the wait after a first failure to ask, doubled after each
	// failure in a row, never over Interval. Default 250 ms.
	Retry time.Duration
}

// defaultRetry is Poll.Retry's default: a source out of reach is asked
// again after 0.25 s, 0.5 s, 1 s, 2 s, ... up to its Interval.
const defaultRetry = 250 * time.Millisecond

// Follow asks until ctx ends, reporting to r as a [Source]'s Follow does:
// each answer with r.Answered, each failure with r.Failed, and each new
// node set with r.Yield; the first version has Resync set. It returns
// ctx's error, or r.Yield's.
func (p Poll) Follow(ctx context.Context, r Reporter) error {
	var last []kolco.Node
	var rev int64
	retry := time.Duration(0) // the wait after the last failure in a row; 0 after an answer
	for {
		asked := time.Now()
		nodes, err := p.Ask(ctx)
		wait := p.Interval
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, ErrBadContent):
			r.Answered(err)
		case err != nil:
			r.Failed(err)
			retry = p.nextRetry(retry)
			wait = retry
		case rev > 0 && slices.Equal(nodes, last):
			r.Answered(nil)
		default:
			rev++
			if err := r.Yield(ctx, Version{Revision: rev, Nodes: nodes, Resync: rev == 1}); err != nil {
				return err
			}
			last = nodes
		}
		if err == nil || errors.Is(err, ErrBadContent) {
			retry = 0
		}
		if err := p.wait(ctx, asked, wait); err != nil {
			return err
		}
	}
}

// nextRetry is the wait after a failure to ask that follows one after
// which the wait was last (0: the failure is the first in a row).
func (p Poll) nextRetry(last time.Duration) time.Duration {
	next := 2 * last
	if last == 0 {
		next = p.Retry
		if next <= 0 {
			next = defaultRetry
		}
	}
	return min(next, p.Interval)
}

// wait returns when it is time to ask again, after d or sooner on a
// nudge (MinGap after asking at asked), or with ctx's error.
func (p Poll) wait(ctx context.Context, asked time.Time, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-p.Nudge:
		return sleep(ctx, p.MinGap-time.Since(asked))
	case <-ctx.Done():
		return ctx.Err()
	}
}
