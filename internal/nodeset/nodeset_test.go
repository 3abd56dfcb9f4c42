package nodeset_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

func ids(nodes []kolco.Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.ID)
	}
	return out
}

func mustSet(t *testing.T, nodes ...kolco.Node) nodeset.Set {
	t.Helper()
	s, err := nodeset.New(nodes)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestApply checks each part of a change and the delta it reports, and
// that the receiver is never modified.
func TestApply(t *testing.T) {
	s := mustSet(t, kolco.Node{ID: "c"}, kolco.Node{ID: "a"}, kolco.Node{ID: "b", Weight: 2})
	if got := ids(s.Nodes()); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("New sorted = %v", got)
	}
	if i, ok := s.Index("b"); !ok || i != 1 || s.At(1).Weight != 2 {
		t.Fatalf("Index(b) = %d, %v", i, ok)
	}
	d, err := s.Apply(kolco.Change{
		Remove: []string{"c", "a"},
		Add:    []kolco.Node{{ID: "d"}, {ID: "a", Addr: "new"}},
		Update: []kolco.Node{{ID: "b", Weight: 3, Zone: "z"}, {ID: "d", Addr: "x"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(d.New.Nodes()); !slices.Equal(got, []string{"a", "b", "d"}) {
		t.Errorf("New = %v", got)
	}
	if got := ids(d.Removed); !slices.Equal(got, []string{"c", "a"}) {
		t.Errorf("Removed = %v, want the change's order", got)
	}
	if got := ids(d.Added); !slices.Equal(got, []string{"d", "a"}) {
		t.Errorf("Added = %v, want the change's order", got)
	}
	if len(d.Reweighted) != 1 || d.Reweighted[0].ID != "b" || d.Reweighted[0].Weight != 3 {
		t.Errorf("Reweighted = %+v, want b at 3 (d's update keeps its weight)", d.Reweighted)
	}
	if n := d.New.At(1); n.Weight != 3 || n.Zone != "z" || d.New.At(0).Addr != "new" || d.New.At(2).Addr != "x" {
		t.Errorf("updated values not in New: %+v", d.New.Nodes())
	}
	if got := ids(s.Nodes()); !slices.Equal(got, []string{"a", "b", "c"}) || s.At(1).Weight != 2 {
		t.Errorf("Apply modified its receiver: %+v", s.Nodes())
	}
	if d.Old.Len() != 3 {
		t.Errorf("Old has %d nodes", d.Old.Len())
	}
}

// TestApplyErrors checks the sentinel of every refused change.
func TestApplyErrors(t *testing.T) {
	s := mustSet(t, kolco.Node{ID: "a"}, kolco.Node{ID: "b"})
	cases := []struct {
		name string
		c    kolco.Change
		want error
	}{
		{"AddPresent", kolco.Change{Add: []kolco.Node{{ID: "a"}}}, kolco.ErrDuplicateNode},
		{"AddTwice", kolco.Change{Add: []kolco.Node{{ID: "x"}, {ID: "x"}}}, kolco.ErrDuplicateNode},
		{"AddEmptyID", kolco.Change{Add: []kolco.Node{{}}}, kolco.ErrBadNodeID},
		{"AddBadWeight", kolco.Change{Add: []kolco.Node{{ID: "x", Weight: -1}}}, kolco.ErrBadWeight},
		{"RemoveAbsent", kolco.Change{Remove: []string{"z"}}, kolco.ErrUnknownNode},
		{"RemoveTwice", kolco.Change{Remove: []string{"a", "a"}}, kolco.ErrUnknownNode},
		{"UpdateAbsent", kolco.Change{Update: []kolco.Node{{ID: "z"}}}, kolco.ErrUnknownNode},
		{"UpdateRemoved", kolco.Change{Remove: []string{"a"}, Update: []kolco.Node{{ID: "a"}}}, kolco.ErrUnknownNode},
		{"UpdateTwice", kolco.Change{Update: []kolco.Node{{ID: "a"}, {ID: "a", Weight: 2}}}, kolco.ErrDuplicateNode},
		{"UpdateBadWeight", kolco.Change{Update: []kolco.Node{{ID: "a", Weight: -3}}}, kolco.ErrBadWeight},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := s.Apply(c.c); !errors.Is(err, c.want) {
				t.Errorf("error %v, want one wrapping %v", err, c.want)
			}
		})
	}
	if !slices.Equal(ids(s.Nodes()), []string{"a", "b"}) {
		t.Fatalf("failed changes altered the set: %v", ids(s.Nodes()))
	}
}

// TestAppendNewAndRest skips nodes already taken after start (but not
// before it), and completes a walk in the given order up to n.
func TestAppendNewAndRest(t *testing.T) {
	a, b, c, d := kolco.Node{ID: "a"}, kolco.Node{ID: "b"}, kolco.Node{ID: "c"}, kolco.Node{ID: "d"}
	dst := []kolco.Node{c} // a caller's earlier result, before start
	start := len(dst)
	for _, nd := range []kolco.Node{b, b, c, b} {
		dst = nodeset.AppendNew(dst, start, nd)
	}
	name := func(ns []kolco.Node) (s string) {
		for _, n := range ns {
			s += n.ID
		}
		return s
	}
	if got := name(dst); got != "cbc" {
		t.Fatalf("after the walk: %q, want cbc", got)
	}
	if got := name(nodeset.AppendRest(dst, start, 3, []kolco.Node{a, b, c, d})); got != "cbca" {
		t.Fatalf("completed to 3: %q, want cbca", got)
	}
	if got := name(nodeset.AppendRest(dst, start, 2, []kolco.Node{a, b, c, d})); got != "cbc" {
		t.Fatalf("already 2: %q, want cbc unchanged", got)
	}
}

// TestCheckWeight: a weight set explicitly must be positive and finite;
// zero is refused here, where kolco.Node.Validate reads it as 1.
func TestCheckWeight(t *testing.T) {
	for _, c := range []struct {
		w  float64
		ok bool
	}{{1, true}, {0.25, true}, {1e9, true}, {0, false}, {-1, false}, {math.NaN(), false}, {math.Inf(1), false}, {math.Inf(-1), false}} {
		t.Run(fmt.Sprint(c.w), func(t *testing.T) {
			err := nodeset.CheckWeight(c.w)
			if (err == nil) != c.ok || err != nil && !errors.Is(err, kolco.ErrBadWeight) {
				t.Errorf("CheckWeight(%v) = %v, want ok %v or ErrBadWeight", c.w, err, c.ok)
			}
			if nerr := (kolco.Node{ID: "a", Weight: c.w}).Validate(); c.w != 0 && (nerr == nil) != c.ok {
				t.Errorf("Node{Weight: %v}.Validate() = %v; CheckWeight says %v", c.w, nerr, err)
			}
		})
	}
}

// TestCheckNew: new nodes must be valid, absent and named once.
func TestCheckNew(t *testing.T) {
	has := func(id string) bool { return id == "a" }
	for _, c := range []struct {
		name  string
		nodes []kolco.Node
		want  error
	}{
		{"new", []kolco.Node{{ID: "b"}, {ID: "c", Weight: 2}}, nil},
		{"present", []kolco.Node{{ID: "a"}}, kolco.ErrDuplicateNode},
		{"twice", []kolco.Node{{ID: "b"}, {ID: "b"}}, kolco.ErrDuplicateNode},
		{"no ID", []kolco.Node{{}}, kolco.ErrBadNodeID},
		{"bad weight", []kolco.Node{{ID: "b", Weight: -1}}, kolco.ErrBadWeight},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := nodeset.CheckNew(has, c.nodes)
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("CheckNew = %v, want %v", err, c.want)
			}
		})
	}
}
