package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/etcd"
	"github.com/kolco-dev/kolco/membership/etcdtest"
)

// TestFaultEtcdStopped: with etcd gone, a watcher keeps its last view and
// reports it stale, with the time since the last answer; when etcd is
// back it catches up by itself.
func TestFaultEtcdStopped(t *testing.T) {
	checkNoLeak(t)
	srv := etcdtest.Start(t, etcdtest.Config{})
	s := newStore(t, srv.Endpoint, "/kolco/test/")
	rev, err := s.Apply(ctx(t), 1, etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "a"}}}})
	if err != nil {
		t.Fatal(err)
	}
	w := watch(t, s)
	next(t, w)
	// A change seen through the watch: it is open before etcd stops.
	if _, err := s.Apply(ctx(t), rev, etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "b"}}}}); err != nil {
		t.Fatal(err)
	}
	last := next(t, w)

	srv.Stop()
	stopped := time.Now()
	st := waitStatus(t, w, "stale after etcd stopped", func(st membership.Status) bool { return st.Stale() })
	detected := time.Since(stopped)
	if !errors.Is(st.Err, membership.ErrUnreachable) || st.Revision != last.Revision {
		t.Errorf("status %v, want unreachable at revision %d", st, last.Revision)
	}
	// Away long enough for the client's reconnection backoff to reach
	// its cap (2s).
	later := waitStatus(t, w, "the time since the last answer grows", func(s2 membership.Status) bool {
		return s2.SinceAnswer(time.Now()) > 3*time.Second
	})
	if !later.LastAnswer.Equal(st.LastAnswer) || !later.Stale() {
		t.Errorf("status while etcd is away: %v", later)
	}
	noVersion(t, w)

	srv.Restart()
	back := time.Now()
	writer := newStore(t, srv.Endpoint, "/kolco/test/")
	rev, err = writer.Update(ctx(t), func(etcd.Listing) (etcd.Edit, error) {
		return etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "c"}}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	v := next(t, w)
	caughtUp := time.Since(back)
	if !slices.Equal(v.IDs(), []string{"a", "b", "c"}) || v.Revision != rev {
		t.Fatalf("after etcd came back: %v, want a, b, c at revision %d", v, rev)
	}
	waitStatus(t, w, "current again", func(st membership.Status) bool { return !st.Stale() })
	current := time.Since(back)
	t.Logf("etcd stopped: reported stale after %v; etcd back: the change written then seen after %v, view current after %v (progress check every %v)",
		detected.Round(time.Millisecond), caughtUp.Round(time.Millisecond), current.Round(time.Millisecond), checkInterval)
}

// TestFaultWatchPastCompaction: a watcher cut off from etcd while the
// membership changes and the history is compacted reads the membership
// again in full when it is back, and says so, instead of skipping the gap.
func TestFaultWatchPastCompaction(t *testing.T) {
	checkNoLeak(t)
	srv := etcdtest.Start(t, etcdtest.Config{})
	proxy := etcdtest.NewProxy(t, srv)
	writer := newStore(t, srv.Endpoint, "/kolco/test/")
	rev, err := writer.Apply(ctx(t), 1, etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "a"}}}})
	if err != nil {
		t.Fatal(err)
	}
	w := watch(t, newStore(t, proxy.Endpoint, "/kolco/test/"))
	if v := next(t, w); !slices.Equal(v.IDs(), []string{"a"}) {
		t.Fatalf("first version %v", v)
	}

	proxy.Cut()
	waitStatus(t, w, "stale while cut off", func(st membership.Status) bool { return st.Stale() })
	for _, c := range []etcd.Edit{
		{Change: kolco.Change{Add: []kolco.Node{{ID: "b"}}}},
		{Change: kolco.Change{Remove: []string{"a"}}},
		{Change: kolco.Change{Add: []kolco.Node{{ID: "c"}}}},
	} {
		if rev, err = writer.Apply(ctx(t), rev, c); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rawClient(t, srv).Compact(ctx(t), rev); err != nil {
		t.Fatal(err)
	}
	proxy.Restore()
	v := next(t, w)
	if !v.Resync || !slices.Equal(v.IDs(), []string{"b", "c"}) || v.Revision < rev {
		t.Fatalf("after the gap: %v (resync %v), want a full re-read with b, c at revision %d or later", v, v.Resync, rev)
	}
	if st := waitStatus(t, w, "current again", func(st membership.Status) bool { return !st.Stale() }); st.Resyncs != 1 {
		t.Errorf("status %+v, want 1 resync", st)
	}
}

// TestFaultLeaseExpiry: a registered node whose renewals stop (its
// sidecar died) leaves the membership within the lease TTL plus 2 s.
func TestFaultLeaseExpiry(t *testing.T) {
	checkNoLeak(t)
	const ttl = 2 * time.Second
	srv := etcdtest.Start(t, etcdtest.Config{})
	s := newStore(t, srv.Endpoint, "/kolco/test/")
	if _, err := s.Apply(ctx(t), 1, etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "static"}}}}); err != nil {
		t.Fatal(err)
	}
	sidecar, crash := context.WithCancel(context.Background())
	defer crash()
	r, err := s.Register(sidecar, kolco.Node{ID: "mc-1", Addr: "127.0.0.1:11211"}, ttl)
	if err != nil {
		t.Fatal(err)
	}
	w := watch(t, s)
	if v := next(t, w); !slices.Equal(v.IDs(), []string{"mc-1", "static"}) {
		t.Fatalf("first version %v", v)
	}
	crash() // renewals stop; the lease is not revoked
	<-r.Done()
	lastRenewal := r.Status().LastRenewal
	v := next(t, w)
	gone := time.Since(lastRenewal)
	if !slices.Equal(v.IDs(), []string{"static"}) {
		t.Fatalf("after the renewals stopped: %v, want static alone", v)
	}
	t.Logf("a node whose renewals stopped left the membership %v after its last renewal (lease TTL %v)", gone.Round(time.Millisecond), ttl)
	if gone > ttl+2*time.Second {
		t.Errorf("removed %v after the last renewal, more than the TTL %v plus 2s", gone, ttl)
	}
}

// TestFaultConflictingWrites: writers computing changes from the same
// revision race; one wins, the others get ErrConflict and write nothing,
// and the watcher's next version is the winner's whole change.
func TestFaultConflictingWrites(t *testing.T) {
	checkNoLeak(t)
	srv := etcdtest.Start(t, etcdtest.Config{})
	s := newStore(t, srv.Endpoint, "/kolco/test/")
	const writers, rounds = 4, 20
	var initial []kolco.Node
	for i := range 6 {
		initial = append(initial, kolco.Node{ID: fmt.Sprintf("n%d", i)})
	}
	if _, err := s.Apply(ctx(t), 1, etcd.Edit{Change: kolco.Change{Add: initial}}); err != nil {
		t.Fatal(err)
	}
	w := watch(t, s)
	cur := next(t, w)
	for round := range rounds {
		ls, err := s.List(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		changes := make([]etcd.Edit, writers)
		for i := range changes {
			// Each writer replaces two nodes by two of its own, and
			// re-weights a third: a half-applied change would show.
			ids := ls.Version().IDs()
			changes[i] = etcd.Edit{Change: kolco.Change{
				Remove: []string{ids[i], ids[i+1]},
				Add:    []kolco.Node{{ID: fmt.Sprintf("r%d-w%d-x", round, i)}, {ID: fmt.Sprintf("r%d-w%d-y", round, i)}},
				Update: []kolco.Node{{ID: ids[i+2], Weight: float64(round + 2)}},
			}}
		}
		errs := make([]error, writers)
		revs := make([]int64, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				<-start
				revs[i], errs[i] = s.Apply(context.Background(), ls.Revision, changes[i])
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: writers %d and %d both won", round, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, membership.ErrConflict):
				t.Fatalf("round %d: writer %d: %v, want ErrConflict", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer won: %v", round, errs)
		}
		want := applyModel(cur.Nodes, changes[winner])
		v := next(t, w)
		if !slices.Equal(v.Nodes, want) || v.Revision != revs[winner] {
			t.Fatalf("round %d: version %v, want writer %d's change whole: %v at revision %d", round, v, winner, want, revs[winner])
		}
		cur = v
	}
}

// applyModel applies a change of adds, removes and updates to a sorted
// node list, as the store should.
func applyModel(nodes []kolco.Node, c etcd.Edit) []kolco.Node {
	out := slices.DeleteFunc(slices.Clone(nodes), func(n kolco.Node) bool { return slices.Contains(c.Remove, n.ID) })
	for i, n := range out {
		for _, u := range c.Update {
			if u.ID == n.ID {
				out[i] = u
			}
		}
	}
	out = append(out, c.Add...)
	membership.SortNodes(out)
	return out
}

// TestFaultRegistrationOutlivesAnOutage: a registration whose lease is
// lost while etcd is away registers the node again when etcd is back.
func TestFaultRegistrationOutlivesAnOutage(t *testing.T) {
	checkNoLeak(t)
	srv := etcdtest.Start(t, etcdtest.Config{})
	s := newStore(t, srv.Endpoint, "/kolco/test/")
	r, err := s.Register(ctx(t), kolco.Node{ID: "mc-1"}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx(t))
	first := r.Status()
	// etcd's answer to the first renewal is awaited before it stops: until
	// then the client gives the lease its dial timeout and a second (the
	// tests' timeout, stretched by the machine's load: 40-60 s at a load
	// of 8), not its TTL, before it reports it lost.
	waitFor(t, "the lease renewed", func() bool { return r.Status().LastRenewal.After(first.LastRenewal) })
	srv.Stop()
	waitFor(t, "the lease reported lost", func() bool { return r.Status().Err != nil })
	srv.Restart()
	waitFor(t, "registered again", func() bool { st := r.Status(); return st.Err == nil && st.Lease != 0 })
	ls, err := s.List(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := ls.Member("mc-1")
	if !ok || m.Lease != r.Status().Lease {
		t.Errorf("after the outage: %+v (listed %v), want mc-1 under lease %x (was %x)", m, ok, r.Status().Lease, first.Lease)
	}
}

// waitFor polls cond, which an external process (etcd) changes, until it
// holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, bound)
		}
		time.Sleep(5 * time.Millisecond) // polling on an external process, with a deadline
	}
}

// TestFaultOneFailurePerCheck: with etcd gone, the source reports one
// failure per progress check, not one for the unanswered request and
// another for the next one failing: a reporter that logs each new error
// would log two lines every check.
func TestFaultOneFailurePerCheck(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Config{})
	s := newStore(t, srv.Endpoint, "/kolco/test/")
	rev, err := s.Apply(ctx(t), 1, etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "a"}}}})
	if err != nil {
		t.Fatal(err)
	}
	r := &failureCounter{yielded: make(chan struct{}, 1)}
	fctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Follow(fctx, r) }()
	defer func() { cancel(); <-done }()
	yielded := func() {
		t.Helper()
		select {
		case <-r.yielded:
		case <-time.After(bound):
			t.Fatal("no version yielded")
		}
	}
	yielded()
	// A change seen through the watch: it is open before etcd stops.
	if _, err := s.Apply(ctx(t), rev, etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "b"}}}}); err != nil {
		t.Fatal(err)
	}
	yielded()

	srv.Stop()
	stopped := time.Now()
	// Failures keep coming, one a check at most: the checks that ran in
	// a span are at most its length over the interval, and fewer on a
	// busy machine, whose ticker drops the ticks it missed.
	const want = 10
	var failed []error
	waitFor(t, fmt.Sprintf("%d failures reported", want), func() bool {
		r.mu.Lock()
		failed = slices.Clone(r.failed)
		r.mu.Unlock()
		return len(failed) >= want
	})
	checks := int(time.Since(stopped)/checkInterval) + 1
	if len(failed) > checks {
		t.Errorf("%d failures reported in %d checks at most, want one a check:\n%v", len(failed), checks, failed)
	}
	for _, err := range failed {
		if !errors.Is(err, membership.ErrUnreachable) {
			t.Errorf("failure %v, want one wrapping ErrUnreachable", err)
		}
	}
}

// failureCounter is a Reporter that keeps every failure reported.
type failureCounter struct {
	yielded chan struct{}
	mu      sync.Mutex
	failed  []error
}

func (r *failureCounter) Yield(ctx context.Context, v membership.Version) error {
	select {
	case r.yielded <- struct{}{}:
	default:
	}
	return nil
}

func (r *failureCounter) Answered(error) {}

func (r *failureCounter) Failed(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = append(r.failed, err)
}
