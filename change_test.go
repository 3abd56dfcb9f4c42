package kolco_test

import (
	"math"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
)

func ids(nodes []kolco.Node) []string {
	out := []string{}
	for _, n := range nodes {
		out = append(out, n.ID)
	}
	return out
}

func TestDiff(t *testing.T) {
	from := []kolco.Node{
		{ID: "c", Addr: "10.0.0.3:11211"},
		{ID: "a", Weight: 1},
		{ID: "b", Weight: 2, Zone: "z1"},
		{ID: "d", Zone: "z1"},
		{ID: "e"},
	}
	to := []kolco.Node{
		{ID: "f"},
		{ID: "d", Zone: "z2"},             // zone alone
		{ID: "c", Addr: "10.0.0.9:11211"}, // address alone
		{ID: "a"},                         // weight 1 reads as 0: unchanged
		{ID: "b", Weight: 3, Zone: "z1"},  // weight
		{ID: "0", Weight: 2},              // new, sorts first
	}
	c := kolco.Diff(from, to)
	if !slices.Equal(c.Remove, []string{"e"}) {
		t.Errorf("Remove = %v, want [e]", c.Remove)
	}
	if got := ids(c.Add); !slices.Equal(got, []string{"0", "f"}) {
		t.Errorf("Add = %v, want [0 f]", got)
	}
	if got := ids(c.Update); !slices.Equal(got, []string{"b", "c", "d"}) {
		t.Errorf("Update = %v, want [b c d]", got)
	}
	if c.Update[0].Weight != 3 || c.Update[1].Addr != "10.0.0.9:11211" || c.Update[2].Zone != "z2" {
		t.Errorf("Update carries the old values: %+v", c.Update)
	}
}

func TestDiffEqualListsAreEmpty(t *testing.T) {
	a := []kolco.Node{{ID: "x", Weight: 2, Zone: "z", Addr: "h:1"}, {ID: "y"}}
	b := []kolco.Node{{ID: "y", Weight: 1}, {ID: "x", Weight: 2, Zone: "z", Addr: "h:1"}}
	if c := kolco.Diff(a, b); !c.Empty() {
		t.Errorf("Diff of equal sets = %+v, want empty", c)
	}
	if c := kolco.Diff(nil, nil); !c.Empty() {
		t.Errorf("Diff(nil, nil) = %+v", c)
	}
	if (kolco.Change{Remove: []string{"x"}}).Empty() {
		t.Error("a change with a removal is not empty")
	}
}

// TestDiffKeepsWhatApplyMustRefuse checks that Diff passes invalid input on
// for Apply to refuse rather than dropping it: a repeated ID and a NaN
// weight.
func TestDiffKeepsWhatApplyMustRefuse(t *testing.T) {
	from := []kolco.Node{{ID: "a"}}
	c := kolco.Diff(from, []kolco.Node{{ID: "a"}, {ID: "a"}, {ID: "b"}, {ID: "b"}})
	if got := ids(c.Add); !slices.Equal(got, []string{"a", "b", "b"}) {
		t.Errorf("Add = %v, want the repeats listed", got)
	}
	c = kolco.Diff(from, []kolco.Node{{ID: "a", Weight: math.NaN()}})
	if len(c.Update) != 1 {
		t.Errorf("a NaN weight is not updated: %+v", c)
	}
}
