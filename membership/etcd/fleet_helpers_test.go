package etcd_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/etcd"
)

// follower starts a follower of the membership under prefix, with a store
// of its own (a connection of its own, as another process would have);
// both are closed when the test ends.
func follower(t *testing.T, endpoint, prefix string, cfg membership.FollowConfig) *membership.Follower {
	t.Helper()
	s := newStore(t, endpoint, prefix)
	f, err := membership.Follow(context.Background(), s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// agree waits until every follower has applied revision rev and checks
// that they all place alike there. It returns the views and the time from
// start until the last follower had it.
func agree(t *testing.T, rev int64, start time.Time, fs ...*membership.Follower) ([]*membership.View, time.Duration) {
	t.Helper()
	views := make([]*membership.View, len(fs))
	var slowest time.Duration
	for i, f := range fs {
		v, err := f.WaitRevision(ctx(t), rev)
		if err != nil {
			t.Fatalf("follower %d: revision %d not applied: %v; %+v", i, rev, err, f.Report())
		}
		slowest = max(slowest, time.Since(start))
		views[i] = v
	}
	for i, v := range views {
		if v.Fingerprint != views[0].Fingerprint {
			t.Fatalf("revision %d: follower %d has fingerprint %s at revision %d, follower 0 %s at %d",
				rev, i, v.Fingerprint, v.Revision, views[0].Fingerprint, views[0].Revision)
		}
	}
	return views, slowest
}

// members makes the changes "kolco members" makes, through the store's
// guarded Update: add, remove, reweight, drain, undrain.
func members(t *testing.T, s *etcd.Store, op string, node kolco.Node) int64 {
	t.Helper()
	rev, err := s.Update(ctx(t), func(ls etcd.Listing) (etcd.Edit, error) {
		switch op {
		case "add":
			return etcd.Edit{Change: kolco.Change{Add: []kolco.Node{node}}}, nil
		case "remove":
			return etcd.Edit{Change: kolco.Change{Remove: []string{node.ID}}}, nil
		case "reweight":
			m, ok := ls.Member(node.ID)
			if !ok {
				return etcd.Edit{}, fmt.Errorf("%w: %q", kolco.ErrUnknownNode, node.ID)
			}
			m.Weight = node.Weight
			return etcd.Edit{Change: kolco.Change{Update: []kolco.Node{m.Node}}}, nil
		case "drain":
			return etcd.Edit{Drain: []string{node.ID}}, nil
		case "undrain":
			return etcd.Edit{Undrain: []string{node.ID}}, nil
		}
		return etcd.Edit{}, fmt.Errorf("no such change %q", op)
	})
	if err != nil {
		t.Fatalf("%s %s: %v", op, node.ID, err)
	}
	return rev
}

// initState stores the placement state of the algorithm over the nodes
// that take keys, as "kolco members state --init" does.
func initState(t *testing.T, s *etcd.Store, algorithm string, opts algo.Options) int64 {
	t.Helper()
	rev, err := s.Update(ctx(t), func(ls etcd.Listing) (etcd.Edit, error) {
		ps, err := membership.NewPlacementState(algorithm, ls.Version().Nodes, opts)
		if err != nil {
			return etcd.Edit{}, err
		}
		return etcd.Edit{State: ps.Marshal()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// storedPlacement returns the placement the store describes at its
// current revision, read in full and built independently of any follower.
func storedPlacement(t *testing.T, s *etcd.Store, algorithm string) (int64, algo.Placement) {
	t.Helper()
	v, err := s.Read(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if v.State == nil {
		p, err := algo.New(algorithm, v.Nodes, algo.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return v.Revision, p
	}
	ps, err := membership.ParsePlacementState(v.State)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ps.Placement(v.Nodes, algo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v.Revision, p
}

// sameOwners checks that p and q place every key alike.
func sameOwners(t *testing.T, p, q kolco.Placement, keys []string) {
	t.Helper()
	for _, k := range keys {
		a, errA := p.Locate(k)
		b, errB := q.Locate(k)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("key %q: errors %v and %v", k, errA, errB)
		}
		if errA == nil && a.ID != b.ID {
			t.Fatalf("key %q: on %q and on %q", k, a.ID, b.ID)
		}
	}
}

func fingerprintOf(t *testing.T, p kolco.Placement) string {
	t.Helper()
	fp, err := kolco.Fingerprint(p)
	if err != nil {
		t.Fatal(err)
	}
	return fp
}
