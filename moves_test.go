package kolco_test

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/ring"
)

func keySeq(n int) iter.Seq[string] {
	return func(yield func(string) bool) {
		for i := range n {
			if !yield(fmt.Sprintf("user:%d", i)) {
				return
			}
		}
	}
}

// TestMoves: the keys Moves yields are exactly those whose owner differs
// between the two placements, with those owners, in the keys' order; a
// new node takes its keys from every other, and no key moves between two
// nodes that stay.
func TestMoves(t *testing.T) {
	nodes := []kolco.Node{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}}
	before, err := ring.New(nodes, ring.Config{})
	if err != nil {
		t.Fatal(err)
	}
	after, err := ring.New(append(slices.Clone(nodes), kolco.Node{ID: "e"}), ring.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var got []kolco.Move
	for m, err := range kolco.Moves(before, after, keySeq(20000)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	var want []string
	for k := range keySeq(20000) {
		b, _ := before.Locate(k)
		a, _ := after.Locate(k)
		if b.ID != a.ID {
			want = append(want, k)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d moves, want %d", len(got), len(want))
	}
	for i, m := range got {
		if m.Key != want[i] || m.To.ID != "e" || m.From.ID == "e" {
			t.Fatalf("move %d: %s from %s to %s, want %s to e", i, m.Key, m.From.ID, m.To.ID, want[i])
		}
	}
	if share := float64(len(got)) / 20000; share < 0.15 || share > 0.25 {
		t.Errorf("%.1f%% of keys moved to a fifth node, want about 20%%", 100*share)
	}
	n := 0
	for range kolco.Moves(before, after, keySeq(20000)) {
		if n++; n == 3 {
			break // stopping early is allowed
		}
	}
}

// TestMovesError: a placement with no nodes stops the iteration with
// ErrNoNodes.
func TestMovesError(t *testing.T) {
	empty, err := ring.New(nil, ring.Config{})
	if err != nil {
		t.Fatal(err)
	}
	full, err := ring.New([]kolco.Node{{ID: "a"}}, ring.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]kolco.Placement{{empty, full}, {full, empty}} {
		n := 0
		for m, err := range kolco.Moves(pair[0], pair[1], keySeq(10)) {
			n++
			if !errors.Is(err, kolco.ErrNoNodes) || m.Key != "" {
				t.Errorf("yielded %+v, %v; want ErrNoNodes", m, err)
			}
		}
		if n != 1 {
			t.Errorf("%d yields, want the one error", n)
		}
	}
}
