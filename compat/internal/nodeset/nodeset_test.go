package nodeset

import (
	"errors"
	"testing"

	"github.com/kolco-dev/kolco"
)

func TestNewErrors(t *testing.T) {
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
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := New(c.nodes, c.placed); !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
}

func TestAppendN(t *testing.T) {
	s, err := New([]kolco.Node{{ID: "c"}, {ID: "b"}, {ID: "a"}, {ID: "x"}}, []bool{true, true, true, false})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Nodes(); len(got) != 3 || got[0].ID != "a" || got[2].ID != "c" {
		t.Fatalf("Nodes = %v", got)
	}
	walk := []int{2, 2, 3, 0}
	got, err := s.AppendN(nil, 10, len(walk), func(i int) int { return walk[i] })
	if err != nil {
		t.Fatal(err)
	}
	ids := ""
	for _, n := range got {
		ids += n.ID
	}
	if ids != "acb" {
		t.Fatalf("AppendN walk = %q, want %q (walk order, unplaced x skipped, b filled in)", ids, "acb")
	}
	if _, err := s.AppendN(nil, 0, 0, nil); !errors.Is(err, kolco.ErrBadCount) {
		t.Fatalf("n=0: err = %v", err)
	}
	dst := make([]kolco.Node, 0, 3)
	if a := testing.AllocsPerRun(100, func() {
		dst, _ = s.AppendN(dst[:0], 2, len(walk), func(i int) int { return walk[i] })
	}); a != 0 {
		t.Fatalf("AppendN allocates %v times", a)
	}
}
