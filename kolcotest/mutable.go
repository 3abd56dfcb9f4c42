package kolcotest

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
)

func mutable(t *testing.T, a Algorithm, nodes []kolco.Node) (kolco.Placement, kolco.Mutable) {
	t.Helper()
	p := build(t, a, nodes)
	m, ok := p.(kolco.Mutable)
	if !ok {
		t.Skip("placement does not implement kolco.Mutable")
	}
	return p, m
}

func testMutable(t *testing.T, a Algorithm) {
	t.Run("Errors", func(t *testing.T) { testMutableErrors(t, a) })
	t.Run("RemoveAll", func(t *testing.T) { testRemoveAll(t, a) })
	t.Run("Diff", func(t *testing.T) { testDiff(t, a) })
	t.Run("PayloadUpdate", func(t *testing.T) { testPayloadUpdate(t, a) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, a) })
}

// snapshot is what a failed change must leave untouched.
type snapshot struct {
	nodes  []kolco.Node
	owners []string
}

func placeAll(t *testing.T, p kolco.Placement, keys []string) snapshot {
	t.Helper()
	return snapshot{p.Nodes(), placement(t, p, keys)}
}

func testMutableErrors(t *testing.T, a Algorithm) {
	nodes := Nodes(6)
	p, m := mutable(t, a, nodes)
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
		{"ApplyRemoveThenDuplicate", func() error {
			return m.Apply(kolco.Change{Remove: []string{nodes[1].ID}, Add: []kolco.Node{fresh, nodes[2]}})
		}, kolco.ErrDuplicateNode},
		{"ApplyAddThenUnknownRemove", func() error {
			return m.Apply(kolco.Change{Remove: []string{"nope"}, Add: []kolco.Node{fresh}})
		}, kolco.ErrUnknownNode},
		{"ApplyUpdateUnknown", func() error {
			return m.Apply(kolco.Change{Add: []kolco.Node{fresh}, Update: []kolco.Node{{ID: "nope"}}})
		}, kolco.ErrUnknownNode},
		{"ApplyUpdateRemoved", func() error {
			return m.Apply(kolco.Change{Remove: []string{nodes[1].ID}, Update: []kolco.Node{nodes[1]}})
		}, kolco.ErrUnknownNode},
		{"ApplyUpdateTwice", func() error {
			return m.Apply(kolco.Change{Update: []kolco.Node{nodes[0], nodes[0]}})
		}, kolco.ErrDuplicateNode},
		{"ApplyUpdateBadWeight", func() error {
			return m.Apply(kolco.Change{Remove: []string{nodes[1].ID}, Update: []kolco.Node{{ID: nodes[0].ID, Weight: -1}}})
		}, kolco.ErrBadWeight},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := placeAll(t, p, keys)
			err := c.do()
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v, want one wrapping %v", err, c.want)
			}
			after := placeAll(t, p, keys)
			if !slices.Equal(before.nodes, after.nodes) {
				t.Fatalf("failed change altered Nodes(): %v -> %v", ids(before.nodes), ids(after.nodes))
			}
			equalPlacement(t, "after a failed change", before.owners, after.owners, keys)
		})
	}
	// The same ID removed twice in one call: the second is unknown by the
	// time it is applied, so the call fails and changes nothing.
	before := placeAll(t, p, keys)
	if err := m.Remove(nodes[3].ID, nodes[3].ID); err == nil {
		after := placeAll(t, p, keys)
		if len(after.nodes) != len(before.nodes)-1 {
			t.Errorf("Remove(x, x) succeeded but left %d nodes", len(after.nodes))
		}
	} else if !errors.Is(err, kolco.ErrUnknownNode) {
		t.Errorf("Remove(x, x): error %v does not wrap ErrUnknownNode", err)
	}
}

func testRemoveAll(t *testing.T, a Algorithm) {
	nodes := Nodes(4)
	p, m := mutable(t, a, nodes)
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

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
