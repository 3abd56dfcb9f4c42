package nodeset

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kolco-dev/kolco"
)

func TestNewListErrors(t *testing.T) {
	cases := []struct {
		name   string
		nodes  []kolco.Node
		placed []bool
		want   error
	}{
		{"empty", nil, nil, kolco.ErrNoNodes},
		{"none placed", []kolco.Node{{ID: "a"}}, []bool{false}, kolco.ErrNoNodes},
		{"empty id", []kolco.Node{{ID: ""}}, nil, kolco.ErrBadNodeID},
		{"bad weight", []kolco.Node{{ID: "a", Weight: -1}}, nil, kolco.ErrBadWeight},
		{"duplicate", []kolco.Node{{ID: "a"}, {ID: "a"}}, nil, kolco.ErrDuplicateNode},
		{"duplicate unplaced", []kolco.Node{{ID: "a"}, {ID: "a"}}, []bool{true, false}, kolco.ErrDuplicateNode},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := NewList(c.nodes, c.placed); !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
}

func ids(nodes []kolco.Node) string {
	s := ""
	for _, n := range nodes {
		s += n.ID
	}
	return s
}

func TestListAppendN(t *testing.T) {
	l, err := NewList([]kolco.Node{{ID: "c"}, {ID: "b"}, {ID: "a"}, {ID: "x"}, {ID: "d"}}, []bool{true, true, true, false, true})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(l.Nodes()); got != "abcd" {
		t.Fatalf("Nodes = %q, want the placed nodes by ID, abcd", got)
	}
	if l.Len() != 5 || l.At(3).ID != "x" {
		t.Fatalf("Len = %d, At(3) = %v: want all five in the given order", l.Len(), l.At(3))
	}
	walk := []int{2, 2, 3, 0, -1, 1}
	next := func(i int) int { return walk[i] }
	for _, c := range []struct {
		name  string
		n     int
		limit int
		want  string
	}{
		// The walk meets a, a again, unplaced x, c, then stops at -1;
		// the rest come in list order: b, then d.
		{"all", 10, len(walk), "acbd"},
		{"fewer than the walk meets", 2, len(walk), "ac"},
		{"one", 1, len(walk), "a"},
		{"walk cut by limit", 3, 1, "acb"},
		{"no walk", 2, 0, "cb"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := l.AppendN([]kolco.Node{{ID: "z"}}, c.n, c.limit, next)
			if err != nil {
				t.Fatal(err)
			}
			if ids(got) != "z"+c.want {
				t.Fatalf("AppendN = %q, want %q after the z already in dst", ids(got), "z"+c.want)
			}
		})
	}
	if _, err := l.AppendN(nil, 0, 0, nil); !errors.Is(err, kolco.ErrBadCount) {
		t.Errorf("n=0: err = %v", err)
	}
	var zero List
	if _, err := zero.AppendN(nil, 1, 0, nil); !errors.Is(err, kolco.ErrNoNodes) {
		t.Errorf("zero List: err = %v", err)
	}
	dst := make([]kolco.Node, 0, 3)
	if a := testing.AllocsPerRun(100, func() {
		dst, _ = l.AppendN(dst[:0], 3, len(walk), next)
	}); a != 0 {
		t.Fatalf("AppendN allocates %v times", a)
	}
}

func TestListNode(t *testing.T) {
	l, err := NewList([]kolco.Node{{ID: "b"}, {ID: "a"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := l.Node(1); err != nil || n.ID != "a" {
		t.Errorf("Node(1) = %v, %v; want a, the second in the given order", n, err)
	}
	if _, err := l.Node(-1); !errors.Is(err, kolco.ErrNoNodes) {
		t.Errorf("Node(-1): err = %v, want ErrNoNodes", err)
	}
}

func TestListAppendOrder(t *testing.T) {
	l, err := NewList([]kolco.Node{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}}, []bool{true, true, false, true})
	if err != nil {
		t.Fatal(err)
	}
	order := []int32{3, 1, 2, 0} // d b c a
	for _, c := range []struct {
		first int
		n     int
		want  string
	}{
		{1, 4, "bad"}, // from b round to d, c skipped (not placed)
		{0, 2, "ad"},
		{3, 1, "d"},
	} {
		t.Run(fmt.Sprintf("from %d, n=%d", c.first, c.n), func(t *testing.T) {
			got, err := l.AppendOrder(nil, c.n, order, c.first)
			if err != nil || ids(got) != c.want {
				t.Errorf("AppendOrder = %q, %v; want %q", ids(got), err, c.want)
			}
		})
	}
}
