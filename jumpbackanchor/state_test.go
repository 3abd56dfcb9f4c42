package jumpbackanchor

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// TestRestoreRebuildsTheState checks the claim the encoding rests on: the
// entries of the removed buckets follow from the number of buckets and the
// order of removal alone. After every step of a random history that
// empties the set now and then, the restored state equals the live one in
// every field a lookup or a later change reads.
func TestRestoreRebuildsTheState(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	p, err := New(nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	var in []string
	for step := range 500 {
		if len(in) == 0 || rng.IntN(5) < 3 {
			id := fmt.Sprint("n", rng.IntN(60))
			if slices.Contains(in, id) {
				continue
			}
			if err := p.Add(kolco.Node{ID: id}); err != nil {
				t.Fatal(err)
			}
			in = append(in, id)
		} else {
			i := rng.IntN(len(in))
			if err := p.Remove(in[i]); err != nil {
				t.Fatal(err)
			}
			in = slices.Delete(in, i, i+1)
		}
		q, err := Restore(p.Nodes(), Config{}, p.MarshalState())
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		a, b := p.m.Load(), q.m.Load()
		if a.size != b.size || !slices.Equal(a.removed, b.removed) || !slices.Equal(a.ka, b.ka) ||
			!slices.Equal(a.ids, b.ids) || !slices.Equal(a.owner, b.owner) {
			t.Fatalf("step %d: restored state differs:\n%+v\n%+v", step, *a, *b)
		}
	}
}

func TestRestoreRefusesOtherStates(t *testing.T) {
	nodes := []kolco.Node{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	p, _ := New(nodes, Config{})
	_ = p.Remove("a")
	good := p.MarshalState()
	left := []kolco.Node{{ID: "b"}, {ID: "c"}}
	if _, err := Restore(left, Config{}, good); err != nil {
		t.Fatalf("the state itself: %v", err)
	}
	state := func(size int, removed []int, ids ...string) []byte {
		w := nodeset.StateWriter("jumpbackanchor")
		w.Uint(uint64(size))
		w.Uint(uint64(len(removed)))
		for _, b := range removed {
			w.Uint(uint64(b))
		}
		for _, id := range ids {
			w.String(id)
		}
		return w.B
	}
	if _, err := Restore(left, Config{}, state(3, []int{0}, "b", "c")); err != nil {
		t.Fatalf("the state written by hand: %v", err)
	}
	for _, c := range []struct {
		name  string
		nodes []kolco.Node
		data  []byte
	}{
		{"OtherNodes", []kolco.Node{{ID: "b"}, {ID: "x"}}, good},
		{"MoreNodes", nodes, good},
		{"Trailing", left, append(slices.Clone(good), 0)},
		{"Truncated", left, good[:len(good)-1]},
		{"RemovedTwice", left, state(3, []int{0, 0}, "b", "c")},
		{"RemovedOutOfRange", left, state(3, []int{3}, "b", "c")},
		{"AllRemoved", nil, state(2, []int{0, 1})},
		{"SizeBeyondInput", left, state(1<<20, nil, "b", "c")},
		{"OtherAlgorithm", left, append(nodeset.StateWriter("jumpback").B, good[len(nodeset.StateWriter("jumpbackanchor").B):]...)},
		{"Garbage", nil, []byte("kolco")},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Restore(c.nodes, Config{}, c.data); !errors.Is(err, kolco.ErrBadState) {
				t.Errorf("error %v, want ErrBadState", err)
			}
		})
	}
}
