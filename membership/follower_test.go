package membership_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/membership"
)

// feed is a source whose versions the test hands over one at a time, and
// which records the placement states written back to it.
type feed struct {
	versions chan membership.Version
	taken    chan struct{} // a version was taken by the follower
	writes   chan write
	conflict bool // WriteState fails with ErrConflict
}

type write struct {
	rev   int64
	state []byte
}

func newFeed() *feed {
	return &feed{versions: make(chan membership.Version), taken: make(chan struct{}), writes: make(chan write, 16)}
}

func (s *feed) Read(context.Context) (membership.Version, error) {
	return membership.Version{}, errors.New("not used")
}

func (s *feed) Follow(ctx context.Context, r membership.Reporter) error {
	for {
		select {
		case v := <-s.versions:
			if err := r.Yield(ctx, v); err != nil {
				return err
			}
			select {
			case s.taken <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *feed) WriteState(_ context.Context, rev int64, state []byte) error {
	s.writes <- write{rev, state}
	if s.conflict {
		return membership.ErrConflict
	}
	return nil
}

// follow starts a follower of src, closed when the test ends.
func follow(t *testing.T, src membership.Source, cfg membership.FollowConfig) *membership.Follower {
	t.Helper()
	f, err := membership.Follow(context.Background(), src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// push hands v to the follower and returns once the follower has taken
// it: it has finished with every version before v.
func (s *feed) push(v membership.Version) {
	s.versions <- v
	<-s.taken
}

// send hands v to the follower and waits until it has applied it.
func send(t *testing.T, s *feed, f *membership.Follower, v membership.Version) *membership.View {
	t.Helper()
	s.push(v)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	view, err := f.WaitRevision(ctx, v.Revision)
	if err != nil {
		t.Fatalf("revision %d not applied: %v; %+v", v.Revision, err, f.Report())
	}
	return view
}

// version returns a version of the given nodes, weight 1, no state.
func version(rev int64, ids ...string) membership.Version {
	v := membership.Version{Revision: rev}
	for _, id := range ids {
		v.Nodes = append(v.Nodes, kolco.Node{ID: id, Addr: id + ":11211"})
	}
	return v
}

func fingerprint(t *testing.T, p kolco.Placement) string {
	t.Helper()
	fp, err := kolco.Fingerprint(p)
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

func TestFollowerPublishesEachVersion(t *testing.T) {
	checkNoLeak(t)
	s := newFeed()
	changes := make(chan [2]int64, 3)
	f := follow(t, s, membership.FollowConfig{Algorithm: "ring", Initial: kolcotest.Nodes(2),
		OnChange: func(prev, next *membership.View) { changes <- [2]int64{prev.Revision, next.Revision} }})
	first := f.View()
	if first.Revision != 0 || len(first.Nodes) != 2 || !f.Report().Stale {
		t.Fatalf("before any version: %+v, status %+v", first, f.Report())
	}
	keys := kolcotest.Keys(2000)
	before := owners(first.Placement, keys)
	views := []*membership.View{first}
	for i, v := range []membership.Version{version(3, "a", "b", "c"), version(5, "a", "c"), version(9, "a", "c", "d")} {
		view := send(t, s, f, v)
		want, err := algo.New("ring", v.Nodes, algo.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if view.Revision != v.Revision || !slices.Equal(view.Placement.Nodes(), v.Nodes) || view.Fingerprint != fingerprint(t, want) {
			t.Fatalf("version %d: view %+v, want the ring over %v", i, view, v.Nodes)
		}
		select {
		case <-views[len(views)-1].Replaced():
		default:
			t.Errorf("version %d: the view it replaced is not marked replaced", i)
		}
		views = append(views, view)
	}
	// Readers holding the first view still place by it.
	if got := owners(first.Placement, keys); !slices.Equal(got, before) || fingerprint(t, first.Placement) != first.Fingerprint {
		t.Error("a published view changed after a newer one replaced it")
	}
	for _, want := range [][2]int64{{0, 3}, {3, 5}, {5, 9}} {
		if got := <-changes; got != want {
			t.Errorf("OnChange saw revisions %v, want %v", got, want)
		}
	}
	if st := f.Report(); st.Stale || st.Revision != 9 || st.Versions != 3 || !st.Shared {
		t.Errorf("status %+v", st)
	}
}

func owners(p kolco.Placement, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		n, _ := p.Locate(k)
		out[i] = n.ID
	}
	return out
}

// TestFollowerAppliesChanges: a history-dependent placement is changed,
// never rebuilt: removing a node moves only its keys, where a placement
// built anew over the nodes left would move others too.
func TestFollowerAppliesChanges(t *testing.T) {
	checkNoLeak(t)
	s := newFeed()
	f := follow(t, s, membership.FollowConfig{Algorithm: "jump"})
	keys := kolcotest.Keys(5000)
	v1 := send(t, s, f, version(1, "a", "b", "c", "d"))
	v2 := send(t, s, f, version(2, "a", "c", "d"))
	was, now := owners(v1.Placement, keys), owners(v2.Placement, keys)
	for i := range keys {
		if was[i] != "b" && was[i] != now[i] {
			t.Fatalf("key %q moved from %s to %s when b left", keys[i], was[i], now[i])
		}
	}
	rebuilt, err := algo.New("jump", v2.Nodes, algo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fingerprint(t, rebuilt) == v2.Fingerprint {
		t.Error("the follower's placement equals one built anew: the test shows nothing")
	}
	if st := f.Report(); st.Shared {
		t.Errorf("jump without a stored state reported shared: %+v", st)
	}
}

// TestFollowerTakesStoredState: a follower that starts late, or whose own
// history differs, takes the store's placement state and agrees with one
// that applied every change.
func TestFollowerTakesStoredState(t *testing.T) {
	checkNoLeak(t)
	ps, err := membership.NewPlacementState("anchor", kolcotest.Nodes(5), algo.Options{Capacity: 8})
	if err != nil {
		t.Fatal(err)
	}
	nodes := ps.Nodes
	history := []membership.Version{{Revision: 1, Nodes: nodes, State: ps.Marshal()}}
	for i, drop := range []int{3, 1, 0} {
		nodes = slices.Delete(slices.Clone(nodes), drop, drop+1)
		if ps, err = ps.Next(nodes); err != nil {
			t.Fatal(err)
		}
		history = append(history, membership.Version{Revision: int64(i + 2), Nodes: nodes, State: ps.Marshal()})
	}
	early, late := newFeed(), newFeed()
	opts := algo.Options{Capacity: 8}
	fe := follow(t, early, membership.FollowConfig{Algorithm: "anchor", Options: opts})
	fl := follow(t, late, membership.FollowConfig{Algorithm: "anchor", Options: opts, Initial: kolcotest.Nodes(2)})
	for _, v := range history {
		send(t, early, fe, v)
	}
	last := history[len(history)-1]
	view := send(t, late, fl, last)
	if view.Fingerprint != fe.View().Fingerprint || !view.Shared {
		t.Fatalf("late follower %s (shared %v), early %s", view.Fingerprint, view.Shared, fe.View().Fingerprint)
	}
	if a, b := fe.Report(), fl.Report(); a.Adopted != 0 || b.Adopted != 1 {
		t.Errorf("adopted: early %d (want 0: it applied every change), late %d (want 1)", a.Adopted, b.Adopted)
	}
}

// TestFollowerStartsFromInitialState: a follower given the state of the
// placement over its initial nodes places by it before the source's first
// version, as the follower that lived through the changes does, where one
// built afresh over the same nodes places otherwise.
func TestFollowerStartsFromInitialState(t *testing.T) {
	checkNoLeak(t)
	opts := algo.Options{Capacity: 8}
	p, err := algo.New("anchor", kolcotest.Nodes(5), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(kolco.Change{Remove: []string{p.Nodes()[1].ID}}); err != nil {
		t.Fatal(err)
	}
	fresh := follow(t, newFeed(), membership.FollowConfig{Algorithm: "anchor", Options: opts, Initial: p.Nodes()})
	restored := follow(t, newFeed(), membership.FollowConfig{Algorithm: "anchor", Options: opts, Initial: p.Nodes(), InitialState: algo.State(p)})
	if got, want := restored.View().Fingerprint, fingerprint(t, p); got != want {
		t.Errorf("restored from the state: fingerprint %s, the placement's %s", got, want)
	}
	if fresh.View().Fingerprint == fingerprint(t, p) {
		t.Errorf("built afresh over the same nodes: fingerprint %s, the placement's too: the test shows nothing", fresh.View().Fingerprint)
	}
}

// TestFollowerRefusesVersions: a version it cannot apply leaves the view
// as it was and the follower stale, saying why, until one it can.
func TestFollowerRefusesVersions(t *testing.T) {
	checkNoLeak(t)
	anchorState, err := membership.NewPlacementState("anchor", kolcotest.Nodes(2), algo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		v    membership.Version
		want error
	}{
		{"state not readable", membership.Version{Revision: 2, Nodes: kolcotest.Nodes(2), State: []byte("{")}, membership.ErrBadContent},
		{"another algorithm's state", membership.Version{Revision: 2, Nodes: kolcotest.Nodes(2), State: anchorState.Marshal()}, membership.ErrBadConfig},
		{"a weight jump has not", membership.Version{Revision: 2, Nodes: []kolco.Node{{ID: "a", Weight: 2}}}, kolco.ErrBadWeight},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newFeed()
			f := follow(t, s, membership.FollowConfig{Algorithm: "jump"})
			good := send(t, s, f, version(1, "a", "b"))
			bad := c.v
			s.push(bad)
			bad.Revision = 3
			s.push(bad) // taken: the follower is done with the first
			if err := f.Err(); !errors.Is(err, c.want) {
				t.Errorf("refusal %v, want %v", err, c.want)
			}
			if st := f.Report(); !st.Stale || st.Error == "" || f.View() != good {
				t.Errorf("after a refused version: %+v, view at revision %d", st, f.View().Revision)
			}
			send(t, s, f, version(4, "a", "b", "c"))
			if st := f.Report(); st.Stale || f.Err() != nil {
				t.Errorf("a good version after the refused ones left the follower stale: %+v", st)
			}
		})
	}
}

// TestFollowerWritesStateBack: with WriteState, a history-dependent
// follower writes the state of the placement it built when the store holds
// none, or one behind its nodes, guarded by the version's revision; not
// when the state is current.
func TestFollowerWritesStateBack(t *testing.T) {
	checkNoLeak(t)
	s := newFeed()
	f := follow(t, s, membership.FollowConfig{Algorithm: "jumpback", WriteState: true})
	view := send(t, s, f, version(4, "a", "b", "c"))
	w := <-s.writes
	ps, err := membership.ParsePlacementState(w.state)
	if err != nil || w.rev != 4 || !ps.Current(view.Nodes) {
		t.Fatalf("wrote %v at revision %d (%v), want the state of revision 4's placement", ps, w.rev, err)
	}
	stored, err := ps.Placement(view.Nodes, algo.Options{})
	if err != nil || fingerprint(t, stored) != view.Fingerprint {
		t.Fatalf("the state written places otherwise than the follower (%v)", err)
	}
	// The state written comes back current: nothing more to write.
	current := version(5, "a", "b", "c")
	current.State = w.state
	send(t, s, f, current)
	// Behind: c left without the state being computed.
	behind := version(6, "a", "b")
	behind.State = w.state
	view = send(t, s, f, behind)
	w = <-s.writes
	if ps, err := membership.ParsePlacementState(w.state); err != nil || w.rev != 6 || !ps.Current(view.Nodes) {
		t.Fatalf("wrote %v at revision %d (%v), want revision 6's", ps, w.rev, err)
	}
	current = version(7, "a", "b")
	current.State = w.state
	s.push(current) // taken: the follower is done with revision 6
	select {
	case w := <-s.writes:
		t.Errorf("a state written for revision %d, whose state was current", w.rev)
	default:
	}
	if st := f.Report(); st.StatesWritten != 2 {
		t.Errorf("status counts %d states written, want 2", st.StatesWritten)
	}
}

func TestFollowConfigErrors(t *testing.T) {
	src := scripted(func(context.Context, membership.Reporter) error { return nil })
	for _, c := range []struct {
		name string
		cfg  membership.FollowConfig
		want error
	}{
		{"unknown algorithm", membership.FollowConfig{Algorithm: "nope"}, membership.ErrBadConfig},
		{"hash without a name", membership.FollowConfig{Algorithm: "ring", Options: algo.Options{Hash: func(string) uint64 { return 0 }}}, membership.ErrBadConfig},
		{"source cannot write", membership.FollowConfig{Algorithm: "jump", WriteState: true}, membership.ErrBadConfig},
		{"bad initial node", membership.FollowConfig{Algorithm: "ring", Initial: []kolco.Node{{ID: ""}}}, kolco.ErrBadNodeID},
	} {
		t.Run(c.name, func(t *testing.T) {
			if f, err := membership.Follow(context.Background(), src, c.cfg); !errors.Is(err, c.want) {
				if f != nil {
					f.Close()
				}
				t.Errorf("error %v, want %v", err, c.want)
			}
		})
	}
}

func TestFollowerWaitAndReport(t *testing.T) {
	checkNoLeak(t)
	s := newFeed()
	f, err := membership.Follow(context.Background(), s, membership.FollowConfig{Algorithm: "rendezvous"})
	if err != nil {
		t.Fatal(err)
	}
	send(t, s, f, version(2, "a", "b"))
	f.SetDown("b", "a", "b")
	data, err := json.Marshal(f.Report())
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"algorithm", "revision", "fingerprint", "nodes", "down", "applied_at", "stale", "last_answer"} {
		if _, ok := got[key]; !ok {
			t.Errorf("status JSON without %q: %s", key, data)
		}
	}
	if st := f.Report(); !slices.Equal(st.Down, []string{"a", "b"}) || st.Fingerprint != f.View().Fingerprint {
		t.Errorf("status %+v", st)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if v, err := f.WaitRevision(ctx, 3); !errors.Is(err, context.Canceled) || v.Revision != 2 {
		t.Errorf("wait with a cancelled context: revision %d, %v", v.Revision, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if v, err := f.WaitRevision(context.Background(), 3); !errors.Is(err, membership.ErrStopped) || v.Revision != 2 {
		t.Errorf("wait on a stopped follower: revision %d, %v", v.Revision, err)
	}
}

// TestFollowerTakesStoredStateItCannotReach: a change the follower's own
// placement cannot make (more nodes than its anchor's capacity) is no
// reason to refuse a version whose stored state places them.
func TestFollowerTakesStoredStateItCannotReach(t *testing.T) {
	checkNoLeak(t)
	ps, err := membership.NewPlacementState("anchor", kolcotest.Nodes(40), algo.Options{Capacity: 64})
	if err != nil {
		t.Fatal(err)
	}
	s := newFeed()
	f := follow(t, s, membership.FollowConfig{Algorithm: "anchor", Initial: kolcotest.Nodes(2)}) // capacity 16
	view := send(t, s, f, membership.Version{Revision: 1, Nodes: ps.Nodes, State: ps.Marshal()})
	want, err := ps.Placement(ps.Nodes, algo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if view.Fingerprint != fingerprint(t, want) || f.Report().Adopted != 1 {
		t.Errorf("view %s, the stored state's %s; %+v", view.Fingerprint, fingerprint(t, want), f.Report())
	}
}
