package memento

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

func linearBucket(key uint64, buckets int) int { return int(key % uint64(buckets)) }

var testSpec = Spec{Name: "test", Bucket: linearBucket}

// TestRestoreRebuildsTheState checks the claim the encoding rests on: the
// replacers and predecessors of the removed buckets follow from the order
// of removal alone. After every step of a random history of adds and
// removals, the state restored from the encoding equals the live one in
// every field a lookup or a later change reads.
func TestRestoreRebuildsTheState(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	p, err := New(Spec{Name: "test", Bucket: linearBucket}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var in []string
	for step := range 400 {
		if len(in) == 0 || rng.IntN(5) < 2 {
			id := fmt.Sprint("n", rng.IntN(40))
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
		q, err := Restore(testSpec, p.Nodes(), p.MarshalState())
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		a, b := p.m.Load(), q.m.Load()
		if !slices.Equal(a.ids, b.ids) || !slices.Equal(a.rep, b.rep) || !slices.Equal(a.idx, b.idx) ||
			a.last != b.last || a.working != b.working {
			t.Fatalf("step %d: restored state differs:\n%+v\n%+v", step, *a, *b)
		}
		for bk := range a.rep {
			if a.rep[bk] != 0 && a.prev[bk] != b.prev[bk] {
				t.Fatalf("step %d: bucket %d: predecessor %d, restored %d", step, bk, a.prev[bk], b.prev[bk])
			}
		}
	}
}

func TestRestoreRefusesOtherStates(t *testing.T) {
	nodes := []kolco.Node{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	p, _ := New(Spec{Name: "test", Bucket: linearBucket}, nodes)
	_ = p.Remove("b")
	good := p.MarshalState()
	left := []kolco.Node{{ID: "a"}, {ID: "c"}}
	if _, err := Restore(testSpec, left, good); err != nil {
		t.Fatalf("the state itself: %v", err)
	}
	other, _ := New(Spec{Name: "other", Bucket: linearBucket}, left)
	// The size written in two bytes where one is enough.
	head := len(nodeset.StateWriter("test").B)
	overlong := append(append(slices.Clone(good[:head]), good[head]|0x80, 0), good[head+1:]...)
	for _, c := range []struct {
		name  string
		nodes []kolco.Node
		data  []byte
	}{
		{"OtherNodes", []kolco.Node{{ID: "a"}, {ID: "x"}}, good},
		{"MoreNodes", nodes, good},
		{"Trailing", left, append(slices.Clone(good), 0)},
		{"Truncated", left, good[:len(good)-1]},
		{"OtherAlgorithm", left, other.MarshalState()},
		{"NotCanonical", left, overlong},
		{"Garbage", nil, []byte("kolco")},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Restore(testSpec, c.nodes, c.data); !errors.Is(err, kolco.ErrBadState) {
				t.Errorf("error %v, want ErrBadState", err)
			}
		})
	}
}
