package nodeset_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

func ids(s nodeset.Set) []string {
	var out []string
	for _, n := range s.Nodes() {
		out = append(out, n.ID)
	}
	return out
}

func TestChanges(t *testing.T) {
	s, err := nodeset.New([]kolco.Node{{ID: "c"}, {ID: "a"}, {ID: "b", Weight: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(s); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("New sorted = %v", got)
	}
	if i, ok := s.Index("b"); !ok || i != 1 || s.At(1).Weight != 2 {
		t.Fatalf("Index(b) = %d, %v", i, ok)
	}
	s2, err := s.Add(kolco.Node{ID: "aa"})
	if err != nil || !slices.Equal(ids(s2), []string{"a", "aa", "b", "c"}) || s.Len() != 3 {
		t.Fatalf("Add: %v %v (receiver %v)", ids(s2), err, ids(s))
	}
	s3, err := s2.Remove("a", "c")
	if err != nil || !slices.Equal(ids(s3), []string{"aa", "b"}) {
		t.Fatalf("Remove: %v %v", ids(s3), err)
	}
	s4, err := s3.Reweight("b", 5)
	if err != nil || s4.At(1).Weight != 5 || s3.At(1).Weight != 2 {
		t.Fatalf("Reweight: %v, new %v, old %v", err, s4.At(1).Weight, s3.At(1).Weight)
	}
}

func TestErrors(t *testing.T) {
	s, _ := nodeset.New([]kolco.Node{{ID: "a"}, {ID: "b"}})
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"dup", func() error { _, err := s.Add(kolco.Node{ID: "a"}); return err }(), kolco.ErrDuplicateNode},
		{"dup in call", func() error { _, err := s.Add(kolco.Node{ID: "x"}, kolco.Node{ID: "x"}); return err }(), kolco.ErrDuplicateNode},
		{"empty id", func() error { _, err := s.Add(kolco.Node{}); return err }(), kolco.ErrBadNodeID},
		{"unknown", func() error { _, err := s.Remove("z"); return err }(), kolco.ErrUnknownNode},
		{"twice", func() error { _, err := s.Remove("a", "a"); return err }(), kolco.ErrUnknownNode},
		{"reweight unknown", func() error { _, err := s.Reweight("z", 1); return err }(), kolco.ErrUnknownNode},
		{"reweight zero", func() error { _, err := s.Reweight("a", 0); return err }(), kolco.ErrBadWeight},
	} {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: error %v, want %v", c.name, c.err, c.want)
		}
	}
	if !slices.Equal(ids(s), []string{"a", "b"}) {
		t.Fatalf("failed changes altered the set: %v", ids(s))
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
