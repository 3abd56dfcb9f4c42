package membership_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership"
)

// events records what a Poll reports, one line per report.
type events chan string

func (e events) Yield(_ context.Context, v membership.Version) error {
	ids := make([]string, len(v.Nodes))
	for i, n := range v.Nodes {
		ids[i] = n.ID
	}
	e <- fmt.Sprintf("yield %d %v resync=%v", v.Revision, ids, v.Resync)
	return nil
}
func (e events) Answered(err error) { e <- fmt.Sprintf("answered %v", err) }
func (e events) Failed(err error)   { e <- fmt.Sprintf("failed %v", err) }

// TestPollReports: a polled source's answers become versions numbered
// from 1 when they change, an equal answer is an answer that leaves the
// view current, a refused one an answer with its reason, a failure a
// failure; nothing is asked before the interval unless nudged, and a
// nudge asks again no sooner than MinGap after the last asking.
func TestPollReports(t *testing.T) {
	nodes := func(ids ...string) []kolco.Node {
		out := make([]kolco.Node, len(ids))
		for i, id := range ids {
			out[i] = kolco.Node{ID: id, Addr: "127.0.0.1:1"}
		}
		return out
	}
	bad := fmt.Errorf("%w: no such node", membership.ErrBadContent)
	down := errors.New("no answer")
	answers := []struct {
		nodes []kolco.Node
		err   error
	}{{nodes("a"), nil}, {nodes("a"), nil}, {nil, bad}, {nil, down}, {nodes("a", "b"), nil}}
	want := []string{"yield 1 [a] resync=true", "answered <nil>", "answered " + bad.Error(), "failed no answer", "yield 2 [a b] resync=false"}
	var asked []time.Time
	nudge := make(chan struct{}, 1)
	ev := make(events, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := membership.Poll{
		Ask: func(context.Context) ([]kolco.Node, error) {
			asked = append(asked, time.Now())
			a := answers[min(len(asked), len(answers))-1]
			return slices.Clone(a.nodes), a.err
		},
		Interval: time.Hour, Nudge: nudge, MinGap: 20 * time.Millisecond,
	}
	done := make(chan error)
	go func() { done <- p.Follow(ctx, ev) }()
	for i, w := range want {
		if got := <-ev; got != w {
			t.Fatalf("report %d: %q, want %q", i, got, w)
		}
		if i < len(want)-1 {
			nudge <- struct{}{} // the hour-long interval never ends here
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Follow returned %v, want context.Canceled", err)
	}
	for i := 1; i < len(asked); i++ {
		if gap := asked[i].Sub(asked[i-1]); gap < p.MinGap {
			t.Errorf("asked %v after the asking before, under MinGap %v", gap, p.MinGap)
		}
	}
	if len(asked) != len(answers) {
		t.Errorf("asked %d times, want %d", len(asked), len(answers))
	}
}

// TestPollRetriesSoonAfterAFailure: a source asked every hour that fails
// is asked again after Retry, then twice that after each failure in a
// row, never more than Interval, and after an answer at the interval
// again: without a nudge, a failure at a proxy's start costs a moment,
// not an interval.
func TestPollRetriesSoonAfterAFailure(t *testing.T) {
	down := errors.New("no answer")
	var asked []time.Time
	ev := make(events, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := membership.Poll{
		Ask: func(context.Context) ([]kolco.Node, error) {
			asked = append(asked, time.Now())
			if len(asked) <= 3 {
				return nil, down
			}
			return []kolco.Node{{ID: "a", Addr: "127.0.0.1:1"}}, nil
		},
		Interval: time.Hour, Retry: 20 * time.Millisecond,
	}
	done := make(chan error)
	go func() { done <- p.Follow(ctx, ev) }()
	for i, w := range []string{"failed no answer", "failed no answer", "failed no answer", "yield 1 [a] resync=true"} {
		select {
		case got := <-ev:
			if got != w {
				t.Fatalf("report %d: %q, want %q", i, got, w)
			}
		case <-time.After(time.Minute):
			t.Fatalf("report %d (%q) not within a minute of an hour-long interval", i, w)
		}
	}
	select {
	case got := <-ev:
		t.Errorf("asked again after an answer before the interval: %q", got)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	<-done
	for i, least := range []time.Duration{20, 40, 80} {
		if gap := asked[i+1].Sub(asked[i]); gap < least*time.Millisecond {
			t.Errorf("asking %d came %v after a failure, want at least %v", i+2, gap, least*time.Millisecond)
		}
	}

	capped := membership.Poll{Interval: 30 * time.Millisecond, Retry: 20 * time.Millisecond}
	if d := membership.NextRetry(capped, 20*time.Millisecond); d != 30*time.Millisecond {
		t.Errorf("the retry after 20 ms under an interval of 30 ms: %v, want the interval", d)
	}
}
