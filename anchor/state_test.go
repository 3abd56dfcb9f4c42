package anchor

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
)

// TestRestoreRebuildsTheState checks the claim the encoding rests on: the
// whole anchor follows from its capacity and the order of its standing
// removals. After every step of a random history, the restored anchor
// equals the live one in every array.
func TestRestoreRebuildsTheState(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	h, err := New(mkNodes(5), Config{Capacity: 24})
	if err != nil {
		t.Fatal(err)
	}
	for step := range 300 {
		nodes := h.Nodes()
		var c kolco.Change
		if len(nodes) == 0 || (rng.IntN(2) == 0 && len(nodes) < 24) {
			c.Add = []kolco.Node{{ID: fmt.Sprint("x", rng.IntN(60))}}
		}
		if len(nodes) > 0 && rng.IntN(3) > 0 {
			c.Remove = []string{nodes[rng.IntN(len(nodes))].ID}
		}
		if err := h.Apply(c); err != nil && !errors.Is(err, kolco.ErrDuplicateNode) {
			t.Fatalf("step %d: %v", step, err)
		}
		g, err := Restore(h.Nodes(), Config{}, h.MarshalState())
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		a, b := h.m.Load(), g.m.Load()
		if !slices.Equal(a.a, b.a) || !slices.Equal(a.k, b.k) || !slices.Equal(a.w, b.w) || !slices.Equal(a.l, b.l) ||
			!slices.Equal(a.r, b.r) || a.n != b.n || !slices.Equal(a.byBucket, b.byBucket) {
			t.Fatalf("step %d: restored anchor differs:\n%+v\n%+v", step, *a, *b)
		}
	}
}

func TestRestoreRefusesOtherStates(t *testing.T) {
	h, _ := New(mkNodes(4), Config{Capacity: 8})
	_ = h.Remove("node-0001")
	good, nodes := h.MarshalState(), h.Nodes()
	if _, err := Restore(nodes, Config{}, good); err != nil {
		t.Fatalf("the state itself: %v", err)
	}
	for _, c := range []struct {
		name  string
		nodes []kolco.Node
		cfg   Config
		data  []byte
	}{
		{"OtherNodes", mkNodes(3), Config{}, good},
		{"OtherCapacity", nodes, Config{Capacity: 9}, good},
		{"Trailing", nodes, Config{}, append(slices.Clone(good), 1)},
		{"Truncated", nodes, Config{}, good[:len(good)-2]},
		{"Garbage", nodes, Config{}, []byte{1, 2, 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Restore(c.nodes, c.cfg, c.data); !errors.Is(err, kolco.ErrBadState) {
				t.Errorf("error %v, want ErrBadState", err)
			}
		})
	}
}
