package etcd_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/etcd"
	"github.com/kolco-dev/kolco/membership/etcdtest"
)

func TestApplyAndRead(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Config{})
	s := newStore(t, srv.Endpoint, "/kolco/test") // the final "/" is added
	if s.Prefix() != "/kolco/test/" {
		t.Fatalf("prefix %q", s.Prefix())
	}
	ls, err := s.List(ctx(t))
	if err != nil || len(ls.Members) != 0 {
		t.Fatalf("empty store: %+v, %v", ls, err)
	}
	a := kolco.Node{ID: "a", Weight: 2, Zone: "z1", Addr: "10.0.0.1:11211"}
	ps, err := membership.NewPlacementState("slots", []kolco.Node{a, {ID: "b"}, {ID: "c"}}, algo.Options{Slots: 64})
	if err != nil {
		t.Fatal(err)
	}
	rev, err := s.Apply(ctx(t), ls.Revision, etcd.Edit{Change: kolco.Change{Add: []kolco.Node{a, {ID: "b"}, {ID: "c"}}}, State: ps.Marshal()})
	if err != nil {
		t.Fatal(err)
	}
	rev, err = s.Apply(ctx(t), rev, etcd.Edit{Change: kolco.Change{Update: []kolco.Node{{ID: "c", Weight: 3}}}, Drain: []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Read(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if want := []kolco.Node{a, {ID: "c", Weight: 3}}; !slices.Equal(v.Nodes, want) || v.Revision != rev {
		t.Errorf("nodes %+v at %d, want %+v at %d", v.Nodes, v.Revision, want, rev)
	}
	// The change wrote the next placement state with it.
	next, err := ps.Next(v.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	if want := []kolco.Node{{ID: "b"}}; !slices.Equal(v.Drained, want) || string(v.State) != string(next.Marshal()) {
		t.Errorf("drained %+v, state %q, want %q", v.Drained, v.State, next.Marshal())
	}
	rev, err = s.Apply(ctx(t), rev, etcd.Edit{Change: kolco.Change{Remove: []string{"a"}}, Undrain: []string{"b"}, ClearState: true})
	if err != nil {
		t.Fatal(err)
	}
	v, _ = s.Read(ctx(t))
	if !slices.Equal(v.IDs(), []string{"b", "c"}) || v.Drained != nil || v.State != nil {
		t.Errorf("after undrain b, remove a, clear state: %v", v)
	}
}

func TestApplyRefuses(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Config{})
	s := newStore(t, srv.Endpoint, "/kolco/test/")
	rev, err := s.Apply(ctx(t), 1, etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "a"}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		change etcd.Edit
		want   error
	}{
		{"add listed", etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "a"}}}}, kolco.ErrDuplicateNode},
		{"remove unknown", etcd.Edit{Change: kolco.Change{Remove: []string{"x"}}}, kolco.ErrUnknownNode},
		{"update unknown", etcd.Edit{Change: kolco.Change{Update: []kolco.Node{{ID: "x"}}}}, kolco.ErrUnknownNode},
		{"drain unknown", etcd.Edit{Drain: []string{"x"}}, kolco.ErrUnknownNode},
		{"ID twice", etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "b"}}}, Drain: []string{"b"}}, etcd.ErrBadChange},
		{"bad weight", etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "b", Weight: -1}}}}, kolco.ErrBadWeight},
		{"ID with a space", etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "b c"}}}}, kolco.ErrBadNodeID},
		{"zone with a newline", etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "b", Zone: "z\n"}}}}, etcd.ErrBadChange},
		{"nothing", etcd.Edit{}, etcd.ErrBadChange},
		{"state set and cleared", etcd.Edit{State: []byte{1}, ClearState: true}, etcd.ErrBadChange},
		{"state not a placement state", etcd.Edit{State: []byte{1}}, membership.ErrBadContent},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := s.Apply(ctx(t), rev, c.change); !errors.Is(err, c.want) {
				t.Errorf("got %v, want %v", err, c.want)
			}
		})
	}
	if v, _ := s.Read(ctx(t)); v.Revision != rev {
		t.Errorf("a refused change wrote: revision %d, was %d", v.Revision, rev)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  etcd.Config
	}{
		{"no prefix", etcd.Config{Endpoints: []string{"http://127.0.0.1:1"}}},
		{"prefix without a leading slash", etcd.Config{Endpoints: []string{"http://127.0.0.1:1"}, Prefix: "kolco/cache/"}},
		{"root prefix", etcd.Config{Endpoints: []string{"http://127.0.0.1:1"}, Prefix: "/"}},
		{"no endpoints", etcd.Config{Prefix: "/p/"}},
		{"cert without key", etcd.Config{Endpoints: []string{"x"}, Prefix: "/p/", CertFile: "c.pem"}},
		{"user without password", etcd.Config{Endpoints: []string{"x"}, Prefix: "/p/", Username: "u"}},
		{"missing CA file", etcd.Config{Endpoints: []string{"x"}, Prefix: "/p/", CAFile: "/nonexistent/ca.pem"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := etcd.New(c.cfg); !errors.Is(err, membership.ErrBadConfig) {
				t.Errorf("got %v, want ErrBadConfig", err)
			}
		})
	}
}

// TestFollowYieldsEachRevisionWhole: a change of several nodes is one
// version, and every change comes, in order.
func TestFollowYieldsEachRevisionWhole(t *testing.T) {
	checkNoLeak(t)
	srv := etcdtest.Start(t, etcdtest.Config{})
	s := newStore(t, srv.Endpoint, "/kolco/test/")
	w := watch(t, s)
	if v := next(t, w); len(v.Nodes) != 0 || !v.Resync {
		t.Fatalf("first version %v, want an empty resync", v)
	}
	changes := []etcd.Edit{
		{Change: kolco.Change{Add: []kolco.Node{{ID: "a"}, {ID: "b"}, {ID: "c"}}}},
		{Change: kolco.Change{Remove: []string{"a", "b"}, Add: []kolco.Node{{ID: "d"}}}},
		{Change: kolco.Change{Update: []kolco.Node{{ID: "d", Weight: 2}}}, Drain: []string{"c"}},
	}
	want := [][]string{{"a", "b", "c"}, {"c", "d"}, {"d"}}
	rev := w.Status().Revision
	for i, c := range changes {
		var err error
		if rev, err = s.Apply(ctx(t), rev, c); err != nil {
			t.Fatal(err)
		}
		v := next(t, w)
		if !slices.Equal(v.IDs(), want[i]) || v.Revision != rev || v.Resync {
			t.Fatalf("change %d: version %v, want revision %d with %v", i, v, rev, want[i])
		}
	}
}

// TestMalformedValueKeepsLastView: a value written by hand that does not
// parse stops versions, with the reason, until it is fixed.
func TestMalformedValueKeepsLastView(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Config{})
	s := newStore(t, srv.Endpoint, "/kolco/test/")
	raw := rawClient(t, srv)
	if _, err := raw.Put(ctx(t), "/kolco/test/nodes/a", `{"weight": 2}`); err != nil {
		t.Fatal(err)
	}
	w := watch(t, s)
	last := next(t, w)
	if !last.Resync {
		t.Errorf("first version %v not marked resync", last)
	}
	for _, bad := range []string{`{"wieght": 2}`, `{"weight": -1}`, `[1]`, `{"weight": 1}{}`, `{"zone": "a b"}`} {
		if _, err := raw.Put(ctx(t), "/kolco/test/nodes/b", bad); err != nil {
			t.Fatal(err)
		}
		st := waitStatus(t, w, "bad value reported", func(st membership.Status) bool { return st.Err != nil })
		if !errors.Is(st.Err, membership.ErrBadContent) || st.Revision != last.Revision {
			t.Errorf("value %s: status %v, want ErrBadContent at revision %d", bad, st, last.Revision)
		}
		if _, err := s.Read(ctx(t)); !errors.Is(err, membership.ErrBadContent) {
			t.Errorf("value %s: Read gave %v, want ErrBadContent", bad, err)
		}
		noVersion(t, w)
		if _, err := raw.Delete(ctx(t), "/kolco/test/nodes/b"); err != nil {
			t.Fatal(err)
		}
		if last = next(t, w); !slices.Equal(last.IDs(), []string{"a"}) || last.Resync {
			t.Fatalf("after removing the bad value: %v (resync %v)", last, last.Resync)
		}
		waitStatus(t, w, "fresh again", func(st membership.Status) bool { return !st.Stale() })
	}
}

func TestRegister(t *testing.T) {
	checkNoLeak(t)
	srv := etcdtest.Start(t, etcdtest.Config{})
	s := newStore(t, srv.Endpoint, "/kolco/test/")
	node := kolco.Node{ID: "mc-1", Addr: "127.0.0.1:11211"}
	r1, err := s.Register(ctx(t), node, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ls, _ := s.List(ctx(t))
	m, ok := ls.Member("mc-1")
	if !ok || m.Lease == 0 || m.Lease != r1.Status().Lease || m.Node != node {
		t.Fatalf("registered member %+v (listed %v), registration %+v", m, ok, r1.Status())
	}
	// A drained registered node stays drained when its sidecar restarts
	// and takes the registration over.
	if _, err := s.Apply(ctx(t), ls.Revision, etcd.Edit{Drain: []string{"mc-1"}}); err != nil {
		t.Fatal(err)
	}
	r2, err := s.Register(ctx(t), node, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ls, _ = s.List(ctx(t))
	if m, _ = ls.Member("mc-1"); m.Lease != r2.Status().Lease || !m.Drained {
		t.Errorf("after a takeover: %+v, want lease %x and drained", m, r2.Status().Lease)
	}
	if err := r1.Close(ctx(t)); err != nil { // revokes the old lease, which holds nothing now
		t.Fatal(err)
	}
	if ls, _ = s.List(ctx(t)); len(ls.Members) != 1 {
		t.Errorf("closing the replaced registration removed the node: %+v", ls.Members)
	}
	if err := r2.Close(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if ls, _ = s.List(ctx(t)); len(ls.Members) != 0 {
		t.Errorf("after Close: %+v, want no members", ls.Members)
	}

	// A node added for good is not taken over.
	if _, err := s.Apply(ctx(t), ls.Revision, etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "static"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Register(ctx(t), kolco.Node{ID: "static"}, 5*time.Second); !errors.Is(err, kolco.ErrDuplicateNode) {
		t.Errorf("registering over a static node: %v, want ErrDuplicateNode", err)
	}
	if _, err := s.Register(ctx(t), kolco.Node{ID: "x"}, 100*time.Millisecond); !errors.Is(err, etcd.ErrBadChange) {
		t.Errorf("a TTL under a second: %v, want ErrBadChange", err)
	}
}

// TestFirstVersionAfterRefusedReadIsResync: a watch that starts on a
// refused value yields its first version when the value is fixed, marked
// as read in full.
func TestFirstVersionAfterRefusedReadIsResync(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Config{})
	s := newStore(t, srv.Endpoint, "/kolco/test/")
	raw := rawClient(t, srv)
	if _, err := raw.Put(ctx(t), "/kolco/test/nodes/a", `{"weight": "heavy"}`); err != nil {
		t.Fatal(err)
	}
	w := watch(t, s)
	waitStatus(t, w, "the refused value reported", func(st membership.Status) bool { return errors.Is(st.Err, membership.ErrBadContent) })
	if _, err := raw.Put(ctx(t), "/kolco/test/nodes/a", `{"weight": 2}`); err != nil {
		t.Fatal(err)
	}
	if v := next(t, w); !v.Resync || len(v.Nodes) != 1 || v.Nodes[0].Weight != 2 {
		t.Errorf("first version %v (resync %v), want a of weight 2, resync", v, v.Resync)
	}
}

// TestCloseStopsWatcher: a store closed under a watcher stops it with
// ErrClosed rather than leaving it retrying, and fails later requests.
func TestCloseStopsWatcher(t *testing.T) {
	checkNoLeak(t)
	srv := etcdtest.Start(t, etcdtest.Config{})
	s := newStore(t, srv.Endpoint, "/kolco/test/")
	w := watch(t, s)
	next(t, w)
	s.Close()
	select {
	case <-w.Done():
	case <-time.After(bound):
		t.Fatalf("the watcher did not stop; status %v", w.Status())
	}
	if err := w.Close(); !errors.Is(err, etcd.ErrClosed) {
		t.Errorf("watcher ended with %v, want ErrClosed", err)
	}
	if _, err := s.Read(ctx(t)); !errors.Is(err, etcd.ErrClosed) {
		t.Errorf("Read after Close: %v, want ErrClosed", err)
	}
}
