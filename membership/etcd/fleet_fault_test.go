package etcd_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/etcd"
	"github.com/kolco-dev/kolco/membership/etcdtest"
)

// TestFleetPausedFollowerConverges: a follower whose goroutine is blocked
// during changes, and one whose link to etcd is cut while the changes are
// made and the history compacted, each converge on the others' placement
// when they resume.
func TestFleetPausedFollowerConverges(t *testing.T) {
	checkNoLeak(t)
	srv := etcdtest.Start(t, etcdtest.Config{})
	proxy := etcdtest.NewProxy(t, srv)
	prefix := "/kolco/test/"
	writer := newStore(t, srv.Endpoint, prefix)
	for i := 1; i <= 6; i++ {
		members(t, writer, "add", pool(i))
	}
	rev := initState(t, writer, "jump", algo.Options{})
	cfg := membership.FollowConfig{Algorithm: "jump"}
	var pausing atomic.Bool
	resume := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(resume) }) }
	paused := cfg
	paused.OnChange = func(_, next *membership.View) {
		if pausing.Load() {
			<-resume
		}
	}
	a, b := follower(t, srv.Endpoint, prefix, cfg), follower(t, srv.Endpoint, prefix, paused)
	c := follower(t, proxy.Endpoint, prefix, cfg)
	// Cleanups run last first: this one, after the followers', runs before
	// their Close, so that a failing test does not leave b blocked in its
	// OnChange and its Close waiting for it (a failed wait below hung the
	// package until its timeout).
	t.Cleanup(release)
	agree(t, rev, time.Now(), a, b, c)

	pausing.Store(true)
	proxy.Cut()
	first := members(t, writer, "remove", pool(2)) // b takes it, then blocks
	if v, err := b.WaitRevision(ctx(t), first); err != nil || v.Revision != first {
		t.Fatalf("the paused follower at %d (%v), want %d", v.Revision, err, first)
	}
	for _, ch := range []struct {
		op   string
		node int
	}{{"remove", 5}, {"add", 7}, {"remove", 1}, {"drain", 3}, {"add", 2}} {
		rev = members(t, writer, ch.op, pool(ch.node))
		agree(t, rev, time.Now(), a)
	}
	if _, err := rawClient(t, srv).Compact(ctx(t), rev); err != nil {
		t.Fatal(err)
	}
	if v := b.View(); v.Revision != first {
		t.Fatalf("the blocked follower moved on to revision %d", v.Revision)
	}
	if v := c.View(); v.Revision >= first {
		t.Fatalf("the cut-off follower saw revision %d", v.Revision)
	}
	pausing.Store(false)
	release()
	_, took := agree(t, rev, time.Now(), a, b)
	t.Logf("the blocked follower, resumed, converged after %v", took.Round(10*time.Microsecond))
	proxy.Restore()
	_, took = agree(t, rev, time.Now(), a, c)
	st := c.Report()
	t.Logf("the cut-off follower, reconnected, converged after %v (resyncs %d, adopted %d)", took.Round(time.Millisecond), st.Resyncs, st.Adopted)
	if st.Resyncs != 1 {
		t.Errorf("the cut-off follower read the membership in full %d times after the compaction, want 1", st.Resyncs)
	}
}

// TestFleetEtcdStopped: with etcd gone, followers keep serving their last
// view, unchanged, and report it stale; when etcd is back they catch up by
// themselves. The time from etcd's restart to the followers' agreement on
// the change written then is printed.
func TestFleetEtcdStopped(t *testing.T) {
	checkNoLeak(t)
	srv := etcdtest.Start(t, etcdtest.Config{})
	prefix := "/kolco/test/"
	writer := newStore(t, srv.Endpoint, prefix)
	for i := 1; i <= 3; i++ {
		members(t, writer, "add", pool(i))
	}
	rev := initState(t, writer, "anchor", algo.Options{Capacity: 8})
	cfg := membership.FollowConfig{Algorithm: "anchor"}
	fs := []*membership.Follower{follower(t, srv.Endpoint, prefix, cfg), follower(t, srv.Endpoint, prefix, cfg)}
	before, _ := agree(t, rev, time.Now(), fs...)

	srv.Stop()
	stopped := time.Now()
	for i, f := range fs {
		deadline := time.Now().Add(bound)
		for !f.Report().Stale {
			if time.Now().After(deadline) {
				t.Fatalf("follower %d not stale %v after etcd stopped: %+v", i, bound, f.Report())
			}
			time.Sleep(5 * time.Millisecond) // polling on an external process, with a deadline
		}
		st := f.Report()
		if f.View() != before[i] || st.Revision != rev || st.Error == "" {
			t.Errorf("follower %d while etcd is away: %+v", i, st)
		}
		if _, err := f.Placement().Locate("some key"); err != nil {
			t.Errorf("follower %d does not serve its last view: %v", i, err)
		}
	}

	detected := time.Since(stopped)
	srv.Restart()
	back := time.Now()
	rev = members(t, newStore(t, srv.Endpoint, prefix), "add", pool(4))
	_, took := agree(t, rev, back, fs...)
	for i, f := range fs {
		deadline := time.Now().Add(bound)
		for f.Report().Stale {
			if time.Now().After(deadline) {
				t.Fatalf("follower %d still stale %v after etcd is back: %+v", i, bound, f.Report())
			}
			time.Sleep(5 * time.Millisecond) // polling on an external process, with a deadline
		}
	}
	t.Logf("etcd stopped: both followers reported stale within %v (progress check every %v); etcd back: both applied the change written then %v after it served again",
		detected.Round(time.Millisecond), checkInterval, took.Round(time.Millisecond))
}

// TestFleetConflictingWriters: writers racing to change the membership in
// several parts at once, each change one guarded transaction; one wins
// each race and the others retry. Every view any follower publishes is a
// whole committed change: its nodes are those the winning writer computed,
// and it places as the store's content at that revision.
func TestFleetConflictingWriters(t *testing.T) {
	checkNoLeak(t)
	srv := etcdtest.Start(t, etcdtest.Config{})
	prefix := "/kolco/test/"
	setup := newStore(t, srv.Endpoint, prefix)
	for i := 1; i <= 4; i++ {
		members(t, setup, "add", pool(i))
	}
	start := initState(t, setup, "jump", algo.Options{})
	var mu sync.Mutex // guards seen
	var seen []*membership.View
	cfg := membership.FollowConfig{Algorithm: "jump", OnChange: func(_, next *membership.View) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, next)
	}}
	fs := []*membership.Follower{follower(t, srv.Endpoint, prefix, cfg), follower(t, srv.Endpoint, prefix, cfg), follower(t, srv.Endpoint, prefix, cfg)}

	var wmu sync.Mutex // guards committed and last
	committed := map[int64][]string{}
	var last int64
	var wg sync.WaitGroup
	var tries atomic.Int64 // changes computed, won or lost
	for w := range 4 {
		s := newStore(t, srv.Endpoint, prefix)
		r := rand.New(rand.NewPCG(uint64(w), 1))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				var after []string
				change := func(ls etcd.Listing) (etcd.Edit, error) {
					tries.Add(1)
					c, ids := reshuffle(r, ls)
					after = ids
					return c, nil
				}
				rev, err := s.Update(ctx(t), change)
				for errors.Is(err, membership.ErrConflict) { // lost ten races in a row
					rev, err = s.Update(ctx(t), change)
				}
				if err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				wmu.Lock()
				committed[rev], last = after, max(last, rev)
				wmu.Unlock()
			}
		}()
	}
	wg.Wait()
	agree(t, last, time.Now(), fs...)
	mu.Lock()
	defer mu.Unlock()
	cli := rawClient(t, srv)
	for _, v := range seen {
		if v.Revision <= start {
			continue // before the writers started
		}
		if want, ok := committed[v.Revision]; !ok || !slices.Equal(ids(v.Nodes), want) {
			t.Fatalf("a view at revision %d over %v; the write committed there: %v (%v)", v.Revision, ids(v.Nodes), want, ok)
		}
		if fp := placementAt(t, cli, prefix, v.Revision); v.Fingerprint != fp {
			t.Fatalf("a view at revision %d places otherwise than the store there", v.Revision)
		}
	}
	t.Logf("%d writes by 4 writers, %d lost to another and computed again; %d views published by 3 followers, each a whole change",
		len(committed), tries.Load()-int64(len(committed)), len(seen))
}

// reshuffle returns a change of several parts to the membership in ls,
// kept between 3 and 9 listed nodes: remove one or two serving nodes, add
// up to two absent ones, drain or undrain a third; and the IDs of the
// nodes that then serve.
func reshuffle(r *rand.Rand, ls etcd.Listing) (etcd.Edit, []string) {
	var c etcd.Edit
	listed := map[string]bool{}
	var serving []string
	for _, m := range ls.Members {
		listed[m.ID] = true
		if !m.Drained {
			serving = append(serving, m.ID)
		}
	}
	touched := map[string]bool{}
	for len(c.Remove) < 1+len(ls.Members)/8 && len(serving)-len(c.Remove) > 2 {
		if id := serving[r.IntN(len(serving))]; !touched[id] {
			c.Remove, touched[id] = append(c.Remove, id), true
		}
	}
	for _, i := range r.Perm(12) {
		if n := pool(i + 1); !listed[n.ID] && len(c.Add) < 2 {
			c.Add = append(c.Add, n)
		}
	}
	for _, m := range ls.Members {
		if !touched[m.ID] && r.IntN(3) == 0 {
			if m.Drained {
				c.Undrain = []string{m.ID}
			} else {
				c.Drain = []string{m.ID}
			}
			break
		}
	}
	var after []string
	for _, m := range ls.Members {
		drained := m.Drained != (slices.Contains(c.Drain, m.ID) || slices.Contains(c.Undrain, m.ID))
		if !slices.Contains(c.Remove, m.ID) && !drained {
			after = append(after, m.ID)
		}
	}
	for _, n := range c.Add {
		after = append(after, n.ID)
	}
	slices.Sort(after)
	return c, after
}

// placementAt returns the fingerprint of the placement the store's
// content at rev gives, read with a plain client.
func placementAt(t *testing.T, cli *clientv3.Client, prefix string, rev int64) string {
	t.Helper()
	resp, err := cli.Get(ctx(t), prefix, clientv3.WithPrefix(), clientv3.WithRev(rev))
	if err != nil {
		t.Fatal(err)
	}
	var nodes []kolco.Node
	var state []byte
	for _, kv := range resp.Kvs {
		key := strings.TrimPrefix(string(kv.Key), prefix)
		switch {
		case key == "state":
			state = kv.Value
		case strings.HasPrefix(key, "nodes/"):
			m, err := etcd.ParseValue(strings.TrimPrefix(key, "nodes/"), kv.Value)
			if err != nil {
				t.Fatal(err)
			}
			if !m.Drained {
				nodes = append(nodes, m.Node)
			}
		}
	}
	ps, err := membership.ParsePlacementState(state)
	if err != nil {
		t.Fatal(fmt.Errorf("revision %d: %w", rev, err))
	}
	membership.SortNodes(nodes)
	return fingerprintOf(t, mustPlace(t, ps, nodes))
}
