package membership_test

import (
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/membership"
)

func TestNewPlacementStateRefuses(t *testing.T) {
	for _, c := range []struct {
		name, algorithm string
		nodes           []kolco.Node
		want            error
	}{
		{"unknown", "nope", nil, membership.ErrBadConfig},
		{"history-independent", "ring", nil, membership.ErrBadConfig},
		{"spelt otherwise", "JUMP", nil, membership.ErrBadConfig},
		{"weight jump has not", "jump", []kolco.Node{{ID: "a", Weight: 2}}, kolco.ErrBadWeight},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := membership.NewPlacementState(c.algorithm, c.nodes, algo.Options{}); !errors.Is(err, c.want) {
				t.Errorf("error %v, want %v", err, c.want)
			}
		})
	}
}

func TestPlacementStateEncoding(t *testing.T) {
	ps, err := membership.NewPlacementState("slots", []kolco.Node{{ID: "b", Weight: 2, Addr: "x:1", Zone: "z"}, {ID: "a"}}, algo.Options{Slots: 64})
	if err != nil {
		t.Fatal(err)
	}
	data := ps.Marshal()
	got, err := membership.ParsePlacementState(data)
	if err != nil {
		t.Fatal(err)
	}
	if want := []kolco.Node{{ID: "a"}, {ID: "b", Weight: 2}}; !slices.Equal(got.Nodes, want) || got.Algorithm != "slots" || string(got.State) != string(ps.State) {
		t.Errorf("read back %+v, want slots over %v", got, want)
	}
	for _, c := range []struct {
		name string
		data string
	}{
		{"empty", ""},
		{"not JSON", "{"},
		{"two values", string(data) + "{}"},
		{"unknown field", `{"algorithm":"jump","nodes":[],"state":null,"x":1}`},
		{"history-independent algorithm", `{"algorithm":"ring","nodes":[],"state":null}`},
		{"weight 1 written", `{"algorithm":"slots","nodes":[{"id":"a","weight":1}],"state":null}`},
		{"nodes not sorted", `{"algorithm":"slots","nodes":[{"id":"b"},{"id":"a"}],"state":null}`},
		{"state of other nodes", `{"algorithm":"slots","nodes":[{"id":"a"}],"state":"` + base64.StdEncoding.EncodeToString(ps.State) + `"}`},
		{"space", " " + string(data)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := membership.ParsePlacementState([]byte(c.data)); !errors.Is(err, membership.ErrBadContent) {
				t.Errorf("error %v, want ErrBadContent", err)
			}
		})
	}
}

// TestPlacementStateFollowsChanges: the states a writer stores with each
// change give the placement of a process that applied the changes in turn;
// a state left behind by changes made without it gives, with the nodes of
// the moment, what its Next would store.
func TestPlacementStateFollowsChanges(t *testing.T) {
	for _, name := range algo.HistoryDependent() {
		t.Run(name, func(t *testing.T) {
			pool := kolcotest.Nodes(6)
			p, err := algo.New(name, pool[:4], algo.Options{})
			if err != nil {
				t.Fatal(err)
			}
			ps := membership.StateOf(name, p)
			behind := ps
			for _, c := range []kolco.Change{
				{Remove: []string{pool[1].ID}},
				{Add: []kolco.Node{pool[4]}},
				{Remove: []string{pool[0].ID, pool[3].ID}, Add: []kolco.Node{pool[5]}},
				{Add: []kolco.Node{pool[1]}},
			} {
				if err := p.Apply(c); err != nil {
					t.Fatal(err)
				}
				if ps, err = ps.Next(p.Nodes()); err != nil {
					t.Fatal(err)
				}
				stored, err := ps.Placement(p.Nodes(), algo.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if !ps.Current(p.Nodes()) || fingerprint(t, stored) != fingerprint(t, p) {
					t.Fatalf("after %+v the stored state places otherwise than the placement changed in turn", c)
				}
				late, err := behind.Placement(p.Nodes(), algo.Options{})
				if err != nil {
					t.Fatal(err)
				}
				caught, err := behind.Next(p.Nodes())
				if err != nil {
					t.Fatal(err)
				}
				again, err := caught.Placement(p.Nodes(), algo.Options{})
				if err != nil || fingerprint(t, again) != fingerprint(t, late) {
					t.Fatalf("a state behind its nodes: its Next places otherwise than it does (%v)", err)
				}
			}
		})
	}
}

// TestPlacementStateStringOfOneNode: one node is "1 node", not "1 nodes".
func TestPlacementStateStringOfOneNode(t *testing.T) {
	p, err := algo.New("jump", []kolco.Node{{ID: "a"}}, algo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := membership.StateOf("jump", p).String(); !strings.Contains(s, "over 1 node ") {
		t.Errorf("String() = %q, want it over 1 node", s)
	}
}
