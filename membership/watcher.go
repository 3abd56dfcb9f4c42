package membership

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Watcher follows a [Source] in a goroutine it owns, from [Watch] until
// [Watcher.Close] (or the end of the context given to Watch), handing each
// new version to its reader on [Watcher.Versions].
type Watcher struct {
	versions chan Version
	cancel   context.CancelFunc
	done     chan struct{}
	err      error // Follow's result, set before done is closed

	mu     sync.Mutex // guards status, last and any
	status Status
	last   int64 // revision of the last version handed on
	any    bool  // whether a version was handed on yet
	now    func() time.Time
}

// Status is what a watcher knows about how current its view is.
type Status struct {
	// Revision is that of the last version handed on (the reader may
	// not have taken it yet); 0 before the first.
	Revision int64
	// Versions counts the versions handed on.
	Versions int64
	// Resyncs counts the versions read in full after a gap (see
	// [Version.Resync]), the first version of the watch not included.
	Resyncs int64
	// LastAnswer is when the store last answered; zero if it never did.
	LastAnswer time.Time
	// Err is why the view may be behind the store: the store could not
	// be reached (wrapping [ErrUnreachable] or a network error), or it
	// holds content the source refuses ([ErrBadContent]), or the source
	// gave an invalid version ([ErrBadVersion]). It is nil while the view
	// is current.
	Err error
}

// Stale reports whether the view may be behind the store: the store has
// not answered yet, or its last answer or failure left an error.
func (s Status) Stale() bool { return s.Err != nil || s.LastAnswer.IsZero() }

// SinceAnswer returns the time from the store's last answer to now, or 0
// if it never answered.
func (s Status) SinceAnswer(now time.Time) time.Duration {
	if s.LastAnswer.IsZero() {
		return 0
	}
	return now.Sub(s.LastAnswer)
}

// String describes the status in one line, such as "current at revision 7
// (answered 120ms ago)" or "stale at revision 7 for 3.2s: ...".
func (s Status) String() string {
	now := time.Now()
	switch {
	case s.LastAnswer.IsZero() && s.Err == nil:
		return "no answer from the store yet"
	case s.LastAnswer.IsZero():
		return fmt.Sprintf("no answer from the store yet: %v", s.Err)
	case s.Err != nil:
		return fmt.Sprintf("stale at revision %d, last answer %v ago: %v", s.Revision, s.SinceAnswer(now).Round(time.Millisecond), s.Err)
	}
	return fmt.Sprintf("current at revision %d (answered %v ago)", s.Revision, s.SinceAnswer(now).Round(time.Millisecond))
}

// Watch starts following src. The watcher's goroutine runs until Close is
// called or ctx is done; Close must be called to release it either way.
func Watch(ctx context.Context, src Source) *Watcher {
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{versions: make(chan Version), cancel: cancel, done: make(chan struct{}), now: time.Now}
	go w.run(ctx, src)
	return w
}

func (w *Watcher) run(ctx context.Context, src Source) {
	defer close(w.done)
	defer close(w.versions)
	err := src.Follow(ctx, (*reporter)(w))
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		err = nil // stopped as asked
	}
	w.err = err
	if err != nil {
		(*reporter)(w).Failed(err)
	}
}

// Versions returns the channel on which the watcher hands on each new
// version, in increasing revision order. It is closed when the watcher
// stops. The watcher does not read ahead: until the reader takes a
// version, the source waits.
func (w *Watcher) Versions() <-chan Version { return w.versions }

// Done returns a channel closed when the watcher has stopped.
func (w *Watcher) Done() <-chan struct{} { return w.done }

// Close stops the watcher and waits for its goroutine to end. It returns
// the error that stopped the source before Close was called, if any (one
// wrapping [ErrBadConfig], or a closed store's); calling it again returns
// the same.
func (w *Watcher) Close() error {
	w.cancel()
	<-w.done
	return w.err
}

// Status returns what the watcher knows about how current its view is.
func (w *Watcher) Status() Status {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status
}

// reporter is the [Reporter] a watcher gives its source; its methods are
// kept off Watcher so that only the source reports.
type reporter Watcher

// Yield validates v and hands it to the reader. A valid version counts as
// an answer that leaves the view current.
func (w *reporter) Yield(ctx context.Context, v Version) error {
	if err := w.accept(v); err != nil {
		w.Answered(err)
		return nil
	}
	select {
	case w.versions <- v:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// accept checks v and, if it may be handed on, records its revision as
// the last one and the answer it stands for.
func (w *reporter) accept(v Version) error {
	if err := v.Validate(); err != nil {
		return fmt.Errorf("revision %d: %w", v.Revision, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.any && v.Revision <= w.last {
		return fmt.Errorf("%w: revision %d after %d", ErrBadVersion, v.Revision, w.last)
	}
	w.any, w.last = true, v.Revision
	w.status.LastAnswer, w.status.Err = w.now(), nil
	w.status.Revision = v.Revision
	w.status.Versions++
	if v.Resync && w.status.Versions > 1 {
		w.status.Resyncs++
	}
	return nil
}

// Answered records an answer of the store.
func (w *reporter) Answered(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.status.LastAnswer, w.status.Err = w.now(), err
}

// Failed records a failure to reach the store.
func (w *reporter) Failed(err error) {
	if err == nil {
		err = ErrUnreachable
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.status.Err = err
}
