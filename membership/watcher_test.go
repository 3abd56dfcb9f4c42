package membership_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership"
)

// scripted is a source that runs a test's script against the reporter,
// then waits for the end of the watch.
type scripted func(ctx context.Context, r membership.Reporter) error

func (s scripted) Read(context.Context) (membership.Version, error) {
	return membership.Version{}, errors.New("not used")
}

func (s scripted) Follow(ctx context.Context, r membership.Reporter) error {
	if err := s(ctx, r); err != nil {
		return err
	}
	<-ctx.Done()
	return ctx.Err()
}

func TestWatcherHandsOnOnlyValidVersionsInOrder(t *testing.T) {
	checkNoLeak(t)
	good := func(rev int64, ids ...string) membership.Version {
		v := membership.Version{Revision: rev}
		for _, id := range ids {
			v.Nodes = append(v.Nodes, kolco.Node{ID: id})
		}
		return v
	}
	src := scripted(func(ctx context.Context, r membership.Reporter) error {
		for _, v := range []membership.Version{
			good(3, "a", "b"),
			good(4, "b", "a"), // not sorted
			{Revision: 5, Nodes: []kolco.Node{{ID: "a"}, {ID: "b", Weight: -1}}},
			{Revision: 6, Nodes: []kolco.Node{{ID: "a"}}, Drained: []kolco.Node{{ID: "a"}}}, // in both lists
			good(3, "c"), // revision not above the last
			good(7, "a", "c"),
		} {
			if err := r.Yield(ctx, v); err != nil {
				return err
			}
		}
		return nil
	})
	w := membership.Watch(context.Background(), src)
	defer w.Close()
	if v := next(t, w); v.Revision != 3 {
		t.Fatalf("first version %v", v)
	}
	if v := next(t, w); v.Revision != 7 || len(v.Nodes) != 2 || v.Nodes[1].ID != "c" {
		t.Fatalf("second version %v, want revision 7 (3..6 refused)", v)
	}
	if st := w.Status(); st.Stale() || st.Revision != 7 || st.Versions != 2 {
		t.Errorf("status %+v, want current at revision 7 after 2 versions", st)
	}
}

func TestWatcherStatus(t *testing.T) {
	checkNoLeak(t)
	type report struct {
		fail, answer error
		answered     bool
	}
	reports := make(chan report)
	applied := make(chan struct{})
	src := scripted(func(ctx context.Context, r membership.Reporter) error {
		for {
			select {
			case rep := <-reports:
				switch {
				case rep.answered:
					r.Answered(rep.answer)
				default:
					r.Failed(rep.fail)
				}
				applied <- struct{}{}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	})
	w := membership.Watch(context.Background(), src)
	defer w.Close()
	if st := w.Status(); !st.Stale() || !st.LastAnswer.IsZero() {
		t.Fatalf("before any answer: %+v, want stale without an answer", st)
	}
	send := func(r report) {
		reports <- r
		<-applied
	}
	send(report{answered: true})
	st := w.Status()
	if st.Stale() || st.LastAnswer.IsZero() {
		t.Fatalf("after an answer: %+v, want current", st)
	}
	down := errors.New("connection refused")
	send(report{fail: down})
	if st2 := w.Status(); !st2.Stale() || !errors.Is(st2.Err, down) || !st2.LastAnswer.Equal(st.LastAnswer) {
		t.Fatalf("after a failure: %+v, want stale, the failure, the last answer kept", st2)
	}
	if since := w.Status().SinceAnswer(st.LastAnswer.Add(time.Second)); since != time.Second {
		t.Errorf("SinceAnswer one second after the answer: %v", since)
	}
	send(report{answered: true, answer: membership.ErrBadContent})
	if st := w.Status(); !st.Stale() || !errors.Is(st.Err, membership.ErrBadContent) {
		t.Fatalf("after a refused answer: %+v", st)
	}
	send(report{answered: true})
	if st := w.Status(); st.Stale() {
		t.Fatalf("after a good answer: %+v", st)
	}
}

func TestWatcherStopsWithItsContext(t *testing.T) {
	checkNoLeak(t)
	ctx, cancel := context.WithCancel(context.Background())
	w := membership.Watch(ctx, scripted(func(context.Context, membership.Reporter) error { return nil }))
	cancel()
	select {
	case <-w.Done():
	case <-time.After(within):
		t.Fatal("the watcher did not stop with its context")
	}
	if _, ok := <-w.Versions(); ok {
		t.Error("versions channel open after the stop")
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close after a cancelled context: %v", err)
	}
}

func TestStatusString(t *testing.T) {
	for _, c := range []struct {
		name string
		st   membership.Status
		want string
	}{
		{"never", membership.Status{}, "no answer from the store yet"},
		{"current", membership.Status{Revision: 7, LastAnswer: time.Now()}, "current at revision 7"},
		{"stale", membership.Status{Revision: 7, LastAnswer: time.Now(), Err: membership.ErrUnreachable}, "stale at revision 7"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.st.String(); !strings.HasPrefix(got, c.want) {
				t.Errorf("String() = %q, want it to start with %q", got, c.want)
			}
		})
	}
}
