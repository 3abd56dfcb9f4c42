package slots

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
)

// TestRestoreKeepsTheTable restores maps of several histories, from ranges
// and without nodes, and checks the table and the encoding.
func TestRestoreKeepsTheTable(t *testing.T) {
	fromRanges, _ := FromRanges(mkNodes(3), []Range{{0, 5, "node-0002"}, {6, 15, "node-0000"}}, Config{Count: 16})
	changed, _ := New(mkNodes(5), Config{Count: 64})
	_ = changed.Remove("node-0002")
	_ = changed.Add(kolco.Node{ID: "x", Weight: 3})
	empty, _ := New(nil, Config{Count: 8})
	for name, m := range map[string]*Map{"FromRanges": fromRanges, "Changed": changed, "Empty": empty} {
		t.Run(name, func(t *testing.T) {
			r, err := Restore(m.Nodes(), Config{}, m.MarshalState())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.Ranges(), m.Ranges()) || r.Count() != m.Count() || !slices.Equal(r.MarshalState(), m.MarshalState()) {
				t.Fatalf("restored %v, want %v", r.Ranges(), m.Ranges())
			}
			if err := r.Add(kolco.Node{ID: "later"}); err != nil {
				t.Fatal(err)
			}
			_ = m.Add(kolco.Node{ID: "later"})
			if !slices.Equal(r.Ranges(), m.Ranges()) {
				t.Fatalf("after the same change: %v, want %v", r.Ranges(), m.Ranges())
			}
		})
	}
}

func TestRestoreRefusesOtherStates(t *testing.T) {
	m, _ := New(mkNodes(3), Config{Count: 16})
	good := m.MarshalState()
	nodes := m.Nodes()
	// The last of the three runs (one byte each for length and owner) cut
	// in two with the same owner, and the run count raised to four: the
	// same table, written as MarshalState never writes it.
	split := func(b []byte) []byte {
		out := append(slices.Clone(b[:len(b)-2]), b[len(b)-2]-1, b[len(b)-1], 1, b[len(b)-1])
		out[len(b)-7]++
		return out
	}
	for _, c := range []struct {
		name  string
		nodes []kolco.Node
		cfg   Config
		data  []byte
	}{
		{"OtherNodes", mkNodes(4), Config{}, good},
		{"OtherCount", nodes, Config{Count: 32}, good},
		{"Trailing", nodes, Config{}, append(slices.Clone(good), 0)},
		{"Truncated", nodes, Config{}, good[:len(good)-1]},
		{"NotCanonical", nodes, Config{}, split(good)},
		{"Garbage", nodes, Config{}, []byte(fmt.Sprint(good))},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Restore(c.nodes, c.cfg, c.data); !errors.Is(err, kolco.ErrBadState) {
				t.Errorf("error %v, want ErrBadState", err)
			}
		})
	}
}
