package etcd_test

import (
	"slices"
	"testing"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/etcdtest"
)

// pool returns node i of the tests' pool, with an address.
func pool(i int) kolco.Node {
	n := kolcotest.Nodes(12)[i-1]
	n.Addr = "10.0.0." + n.ID + ":11211"
	return n
}

// TestFleetAgreesAfterEachChange: three followers on one prefix, twenty
// changes made as "kolco members" makes them (add, remove, reweight, drain,
// undrain); after each, all three apply it and report the same
// fingerprint, the one the store's content gives. The slowest of the
// twenty, from the write's commit to the last follower's view, is printed.
func TestFleetAgreesAfterEachChange(t *testing.T) {
	checkNoLeak(t)
	srv := etcdtest.Start(t, etcdtest.Config{})
	for _, name := range []string{"ring", "slots"} {
		t.Run(name, func(t *testing.T) {
			prefix := "/kolco/" + t.Name() + "/"
			writer := newStore(t, srv.Endpoint, prefix)
			var fs []*membership.Follower
			for range 3 {
				fs = append(fs, follower(t, srv.Endpoint, prefix, membership.FollowConfig{Algorithm: name}))
			}
			for i := 1; i <= 4; i++ {
				members(t, writer, "add", pool(i))
			}
			if name == "slots" {
				initState(t, writer, name, algo.Options{})
			}
			var slowest time.Duration
			for i, c := range []struct {
				op     string
				node   int
				weight float64
			}{
				{"add", 5, 0}, {"add", 6, 0}, {"reweight", 1, 2}, {"drain", 2, 0}, {"remove", 3, 0},
				{"add", 7, 0}, {"undrain", 2, 0}, {"reweight", 5, 3}, {"remove", 6, 0}, {"drain", 4, 0},
				{"add", 3, 0}, {"reweight", 2, 0.5}, {"remove", 1, 0}, {"undrain", 4, 0}, {"add", 8, 0},
				{"drain", 7, 0}, {"add", 1, 0}, {"reweight", 8, 2}, {"remove", 5, 0}, {"undrain", 7, 0},
			} {
				n := pool(c.node)
				n.Weight = c.weight
				rev := members(t, writer, c.op, n)
				views, took := agree(t, rev, time.Now(), fs...)
				slowest = max(slowest, took)
				storeRev, want := storedPlacement(t, writer, name)
				if storeRev != rev || views[0].Revision != rev || views[0].Fingerprint != fingerprintOf(t, want) {
					t.Fatalf("change %d (%s %s): followers at revision %d with %s; the store at %d gives %s",
						i+1, c.op, n.ID, views[0].Revision, views[0].Fingerprint, storeRev, fingerprintOf(t, want))
				}
			}
			// Current: a progress reply missed on a busy machine marks a
			// follower stale until the next one comes.
			for i, f := range fs {
				deadline := time.Now().Add(bound)
				for st := f.Report(); st.Stale || !st.Shared; st = f.Report() {
					if time.Now().After(deadline) {
						t.Fatalf("follower %d not current and shared %v after the last change: %+v", i, bound, st)
					}
					time.Sleep(5 * time.Millisecond) // polling a watch on etcd, with a deadline
				}
			}
			t.Logf("%s: three followers agreed after each of 20 changes; the slowest, from the commit to the last follower's view: %v",
				name, slowest.Round(time.Millisecond))
		})
	}
}

// TestFleetLateFollowerAgrees: a follower started after a history of
// changes of a history-dependent placement builds the same placement as
// the followers that lived through them, on every key of a sample, from
// the state the store keeps.
func TestFleetLateFollowerAgrees(t *testing.T) {
	checkNoLeak(t)
	srv := etcdtest.Start(t, etcdtest.Config{})
	keys := kolcotest.Keys(10000)
	for _, name := range []string{"jump", "anchor"} {
		t.Run(name, func(t *testing.T) {
			prefix := "/kolco/" + t.Name() + "/"
			writer := newStore(t, srv.Endpoint, prefix)
			for i := 1; i <= 5; i++ {
				members(t, writer, "add", pool(i))
			}
			cfg := membership.FollowConfig{Algorithm: name, Options: algo.Options{Capacity: 16}}
			initState(t, writer, name, cfg.Options)
			early := []*membership.Follower{follower(t, srv.Endpoint, prefix, cfg), follower(t, srv.Endpoint, prefix, cfg)}
			var rev int64
			for _, c := range []struct {
				op   string
				node int
			}{{"remove", 2}, {"add", 6}, {"drain", 4}, {"remove", 1}, {"add", 7}, {"undrain", 4}, {"add", 2}, {"remove", 6}} {
				rev = members(t, writer, c.op, pool(c.node))
				agree(t, rev, time.Now(), early...)
			}
			late := follower(t, srv.Endpoint, prefix, cfg)
			views, _ := agree(t, rev, time.Now(), append(early, late)...)
			sameOwners(t, views[0].Placement, views[2].Placement, keys)
			rebuilt, err := algo.New(name, views[2].Nodes, cfg.Options)
			if err != nil {
				t.Fatal(err)
			}
			if fingerprintOf(t, rebuilt) == views[2].Fingerprint {
				t.Error("a placement built anew over the last nodes agrees too: the history shows nothing")
			}
			if st := late.Report(); !st.Shared || st.Stale {
				t.Errorf("late follower: %+v", st)
			}
		})
	}
}

// TestFleetStateWrittenBack: changes made without computing the state (a
// node registered under a lease, and its lease revoked) leave the stored
// state behind its nodes; followers set to write it back race to do so,
// one wins for each change, and every follower, and one started later,
// agrees.
func TestFleetStateWrittenBack(t *testing.T) {
	checkNoLeak(t)
	srv := etcdtest.Start(t, etcdtest.Config{})
	prefix := "/kolco/test/"
	writer := newStore(t, srv.Endpoint, prefix)
	for i := 1; i <= 4; i++ {
		members(t, writer, "add", pool(i))
	}
	initState(t, writer, "jump", algo.Options{})
	cfg := membership.FollowConfig{Algorithm: "jump", WriteState: true}
	fs := []*membership.Follower{follower(t, srv.Endpoint, prefix, cfg), follower(t, srv.Endpoint, prefix, cfg), follower(t, srv.Endpoint, prefix, cfg)}

	// A watch of the store sees each change, then the state written back.
	w := watch(t, writer)
	writtenBack := func(what string, registered bool) {
		t.Helper()
		for {
			v := next(t, w)
			ps, err := membership.ParsePlacementState(v.State)
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(v.IDs(), pool(9).ID) != registered || !ps.Current(v.Nodes) {
				continue // before the change, or the change itself
			}
			views, _ := agree(t, v.Revision, time.Now(), fs...)
			if want := fingerprintOf(t, mustPlace(t, ps, v.Nodes)); views[0].Fingerprint != want {
				t.Fatalf("after %s: followers at %s, the stored state gives %s", what, views[0].Fingerprint, want)
			}
			return
		}
	}
	reg, err := writer.Register(ctx(t), pool(9), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	writtenBack("a registration", true)
	if err := reg.Close(ctx(t)); err != nil {
		t.Fatal(err)
	}
	writtenBack("a revoked lease", false)
	var written int64
	for _, f := range fs {
		written += f.Report().StatesWritten
	}
	if written != 2 {
		t.Errorf("%d states written back, want 2: one per change made without the state", written)
	}
	late := follower(t, srv.Endpoint, prefix, membership.FollowConfig{Algorithm: "jump"})
	agree(t, fs[0].View().Revision, time.Now(), append(fs, late)...)
}

func mustPlace(t *testing.T, ps membership.PlacementState, nodes []kolco.Node) kolco.Placement {
	t.Helper()
	p, err := ps.Placement(nodes, algo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ids returns the IDs of nodes.
func ids(nodes []kolco.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.ID
	}
	slices.Sort(out)
	return out
}
