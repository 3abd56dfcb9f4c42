package kolcotest

import (
	"errors"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kolco-dev/kolco"
)

func membership(t *testing.T, a Algorithm, nodes []kolco.Node) (kolco.Placement, kolco.Membership) {
	t.Helper()
	p := build(t, a, nodes)
	m, ok := p.(kolco.Membership)
	if !ok {
		t.Skip("placement does not implement kolco.Membership")
	}
	return p, m
}

func testMembership(t *testing.T, a Algorithm) {
	t.Run("Errors", func(t *testing.T) { testMembershipErrors(t, a) })
	t.Run("RemoveAll", func(t *testing.T) { testRemoveAll(t, a) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, a) })
}

// snapshot is what a failed change must leave untouched.
type snapshot struct {
	nodes  []kolco.Node
	owners []string
}

func take(t *testing.T, p kolco.Placement, keys []string) snapshot {
	t.Helper()
	return snapshot{p.Nodes(), placement(t, p, keys)}
}

func testMembershipErrors(t *testing.T, a Algorithm) {
	nodes := Nodes(6)
	p, m := membership(t, a, nodes)
	keys := Keys(2000)
	fresh := kolco.Node{ID: "fresh", Addr: addrOf("fresh")}
	cases := []struct {
		name string
		do   func() error
		want error
	}{
		{"AddExisting", func() error { return m.Add(nodes[2]) }, kolco.ErrDuplicateNode},
		{"AddFreshThenExisting", func() error { return m.Add(fresh, nodes[0]) }, kolco.ErrDuplicateNode},
		{"AddTwiceInOneCall", func() error { return m.Add(fresh, fresh) }, kolco.ErrDuplicateNode},
		{"AddEmptyID", func() error { return m.Add(fresh, kolco.Node{}) }, kolco.ErrBadNodeID},
		{"AddNegativeWeight", func() error { return m.Add(fresh, kolco.Node{ID: "x", Weight: -2}) }, kolco.ErrBadWeight},
		{"AddNaNWeight", func() error { return m.Add(kolco.Node{ID: "x", Weight: math.NaN()}) }, kolco.ErrBadWeight},
		{"RemoveUnknown", func() error { return m.Remove("nope") }, kolco.ErrUnknownNode},
		{"RemoveKnownThenUnknown", func() error { return m.Remove(nodes[1].ID, "nope") }, kolco.ErrUnknownNode},
		{"RemoveEmptyID", func() error { return m.Remove("") }, kolco.ErrUnknownNode},
		{"ReweightUnknown", func() error { return m.Reweight("nope", 1) }, kolco.ErrUnknownNode},
		{"ReweightZero", func() error { return m.Reweight(nodes[0].ID, 0) }, kolco.ErrBadWeight},
		{"ReweightNegative", func() error { return m.Reweight(nodes[0].ID, -1) }, kolco.ErrBadWeight},
		{"ReweightNaN", func() error { return m.Reweight(nodes[0].ID, math.NaN()) }, kolco.ErrBadWeight},
		{"ReweightInf", func() error { return m.Reweight(nodes[0].ID, math.Inf(1)) }, kolco.ErrBadWeight},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := take(t, p, keys)
			err := c.do()
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v, want one wrapping %v", err, c.want)
			}
			after := take(t, p, keys)
			if !slices.Equal(before.nodes, after.nodes) {
				t.Fatalf("failed change altered Nodes(): %v -> %v", ids(before.nodes), ids(after.nodes))
			}
			equalPlacement(t, "after a failed change", before.owners, after.owners, keys)
		})
	}
	// The same ID removed twice in one call: the second is unknown by the
	// time it is applied, so the call fails and changes nothing.
	before := take(t, p, keys)
	if err := m.Remove(nodes[3].ID, nodes[3].ID); err == nil {
		after := take(t, p, keys)
		if len(after.nodes) != len(before.nodes)-1 {
			t.Errorf("Remove(x, x) succeeded but left %d nodes", len(after.nodes))
		}
	} else if !errors.Is(err, kolco.ErrUnknownNode) {
		t.Errorf("Remove(x, x): error %v does not wrap ErrUnknownNode", err)
	}
}

func testRemoveAll(t *testing.T, a Algorithm) {
	nodes := Nodes(4)
	p, m := membership(t, a, nodes)
	if err := m.Remove(ids(nodes)...); err != nil {
		t.Fatalf("Remove(all): %v", err)
	}
	checkNoNodes(t, p)
	if err := m.Remove(nodes[0].ID); !errors.Is(err, kolco.ErrUnknownNode) {
		t.Errorf("Remove on empty placement: error %v, want ErrUnknownNode", err)
	}
	if err := m.Reweight(nodes[0].ID, 1); !errors.Is(err, kolco.ErrUnknownNode) {
		t.Errorf("Reweight on empty placement: error %v, want ErrUnknownNode", err)
	}
	if err := m.Add(nodes[2]); err != nil {
		t.Fatalf("Add after removing all: %v", err)
	}
	for _, k := range Keys(100) {
		n, err := p.Locate(k)
		if err != nil || n.ID != nodes[2].ID {
			t.Fatalf("Locate(%q) with one node = %v, %v", k, n.ID, err)
		}
	}
}

// testConcurrent runs readers against a writer; run it under -race. Each
// reader checks that every answer is a node that was ever a member.
func testConcurrent(t *testing.T, a Algorithm) {
	total := 24
	if a.MaxNodes > 0 {
		total = min(total, a.MaxNodes)
	}
	if total < 2 {
		t.Skip("needs room for two nodes")
	}
	pool, start := Nodes(total), max(1, total/3)
	p, m := membership(t, a, pool[:start])
	valid := map[string]bool{}
	for _, n := range pool {
		valid[n.ID] = true
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	keys := Keys(64)
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dst := make([]kolco.Node, 0, 3)
			for i := 0; i < 1_000_000 && !stop.Load(); i++ {
				k := keys[(i+r)%len(keys)]
				n, err := p.Locate(k)
				if err != nil || !valid[n.ID] {
					errs <- "Locate: " + n.ID + " " + errString(err)
					return
				}
				dst, err = p.LocateN(dst[:0], k, 3)
				if err != nil || len(dst) == 0 || (len(dst) > 1 && dst[0].ID == dst[1].ID) {
					errs <- "LocateN: " + errString(err)
					return
				}
			}
		}()
	}
	writer(t, m, pool, start)
	stop.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// writer applies a fixed sequence of changes that never empties the set:
// pool[:start] are members, the others come and go.
func writer(t *testing.T, m kolco.Membership, pool []kolco.Node, start int) {
	t.Helper()
	for i := range 200 {
		n := pool[start+i%(len(pool)-start)]
		if err := m.Add(n); err != nil {
			t.Errorf("Add(%s): %v", n.ID, err)
			return
		}
		if err := m.Reweight(n.ID, 1); err != nil {
			t.Errorf("Reweight(%s): %v", n.ID, err)
		}
		if i%3 == 0 {
			if err := m.Remove(pool[i%start].ID); err != nil {
				t.Errorf("Remove: %v", err)
			}
			if err := m.Add(pool[i%start]); err != nil {
				t.Errorf("re-Add: %v", err)
			}
		}
		if err := m.Remove(n.ID); err != nil {
			t.Errorf("Remove(%s): %v", n.ID, err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
