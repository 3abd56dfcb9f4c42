package etcd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kolco-dev/kolco/membership"
)

// errResync ends a watch that must start again from a full read.
var errResync = errors.New("etcd: history compacted past the watch")

// Follow implements [membership.Source]: a full read, then a watch from
// the revision after it. Each revision's events are applied together and
// yield one version; while a value under the prefix is refused, no
// version is yielded and the refusal is reported. Every CheckInterval the
// watch asks etcd to confirm it is current, and reports the view stale
// when no confirmation comes. After a compaction past the watch the
// prefix is read again in full (a version with Resync set). Follow
// returns ctx's error when ctx is done, or [ErrClosed] if the store is
// closed under it.
func (s *Store) Follow(ctx context.Context, r membership.Reporter) error {
	retry := newBackoff(s.checkInterval())
	for {
		st, err := s.read(ctx, 0)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, ErrClosed) {
				return err
			}
			r.Failed(err)
			if err := retry.wait(ctx); err != nil {
				return err
			}
			continue
		}
		retry.reset()
		st.resync = true
		if err := s.report(ctx, r, st); err != nil {
			return err
		}
		err = s.watch(ctx, st, r)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !errors.Is(err, errResync) {
			return err
		}
	}
}

// report yields the state's version, or reports why it cannot. The first
// version yielded after a full read is marked Resync, even when values
// refused at the read delayed it.
func (s *Store) report(ctx context.Context, r membership.Reporter, st *state) error {
	ls := st.listing()
	if err := ls.problem(); err != nil {
		r.Answered(err)
		return nil
	}
	v := ls.Version()
	v.Resync = st.resync
	if err := r.Yield(ctx, v); err != nil {
		return err
	}
	st.resync = false
	return nil
}

// watch follows the prefix from st.rev+1 until ctx is done or the history
// it needs is compacted (errResync). A watch that etcd ends (a lost
// leader, auth revoked) is started again from the last revision applied.
func (s *Store) watch(ctx context.Context, st *state, r membership.Reporter) error {
	retry := newBackoff(s.checkInterval())
	for {
		cli, err := s.client()
		if err != nil {
			return err // closed
		}
		err = s.watchOnce(ctx, cli, st, r)
		if ctx.Err() != nil || errors.Is(err, errResync) {
			return err
		}
		r.Failed(err)
		if err := retry.wait(ctx); err != nil {
			return err
		}
	}
}

// watchOnce runs one etcd watch; it returns why the watch ended.
func (s *Store) watchOnce(ctx context.Context, cli *clientv3.Client, st *state, r membership.Reporter) error {
	// Require a leader: a member cut off from its cluster ends the watch
	// instead of serving an old view as current.
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	// The client's Watch returns only once etcd has created the watch,
	// which waits for etcd as long as it is away; it runs beside the loop
	// so that the loop can say meanwhile that the view is stale.
	opened := make(chan clientv3.WatchChan, 1)
	go func() { opened <- cli.Watch(wctx, s.prefix, clientv3.WithPrefix(), clientv3.WithRev(st.rev+1)) }()
	var events clientv3.WatchChan
	defer func() {
		cancel()
		if events == nil {
			<-opened // Watch returns once wctx is cancelled
		}
	}()
	tick := time.NewTicker(s.checkInterval())
	defer tick.Stop()
	asked := false // a progress request is waiting for its reply
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case events = <-opened:
			opened = nil
		case resp, ok := <-events:
			if !ok {
				return fmt.Errorf("%w: etcd %s: watch closed", membership.ErrUnreachable, s.where())
			}
			if err := s.watched(ctx, r, st, resp); err != nil {
				return err
			}
			asked = false
		case <-tick.C:
			if events == nil {
				r.Failed(fmt.Errorf("%w: etcd %s: watch not open after %v", membership.ErrUnreachable, s.where(), s.checkInterval()))
				continue
			}
			// One failure per check, the request's own when it fails: the
			// view is stale for one reason at a time.
			pctx, pcancel := context.WithTimeout(wctx, s.checkInterval())
			err := cli.RequestProgress(pctx)
			pcancel()
			switch {
			case ctx.Err() != nil:
			case err != nil:
				r.Failed(fmt.Errorf("%w: etcd %s: progress request: %w", membership.ErrUnreachable, s.where(), err))
			case asked:
				r.Failed(fmt.Errorf("%w: etcd %s: no reply to a progress request in %v", membership.ErrUnreachable, s.where(), s.checkInterval()))
			}
			asked = true
		}
	}
}

// watched applies one reply of the watch to st and reports it to r. The
// error is errResync when the history it follows was compacted, else what
// ends the watch.
func (s *Store) watched(ctx context.Context, r membership.Reporter, st *state, resp clientv3.WatchResponse) error {
	if resp.CompactRevision != 0 {
		r.Failed(fmt.Errorf("etcd %s: history compacted to revision %d, after %d: reading it all again", s.where(), resp.CompactRevision, st.rev))
		return errResync
	}
	if err := resp.Err(); err != nil {
		return s.unreachable(err)
	}
	if err := s.apply(ctx, r, st, resp.Events); err != nil {
		return err
	}
	if resp.IsProgressNotify() {
		r.Answered(st.listing().problem())
	}
	return nil
}

// apply applies events, one revision at a time, yielding a version after
// each: a transaction that touched several keys is one revision.
func (s *Store) apply(ctx context.Context, r membership.Reporter, st *state, events []*clientv3.Event) error {
	for i := 0; i < len(events); {
		rev := events[i].Kv.ModRevision
		for ; i < len(events) && events[i].Kv.ModRevision == rev; i++ {
			if events[i].Type == mvccpb.DELETE {
				st.remove(events[i].Kv)
			} else {
				st.put(events[i].Kv)
			}
		}
		st.rev = rev
		if err := s.report(ctx, r, st); err != nil {
			return err
		}
	}
	return nil
}

// backoff spaces retries from 50ms, doubling up to a limit.
type backoff struct {
	next, limit time.Duration
}

func newBackoff(limit time.Duration) *backoff {
	b := &backoff{limit: limit}
	b.reset()
	return b
}

func (b *backoff) reset() { b.next = min(50*time.Millisecond, b.limit) }

func (b *backoff) wait(ctx context.Context) error {
	t := time.NewTimer(b.next)
	defer t.Stop()
	b.next = min(2*b.next, b.limit)
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
