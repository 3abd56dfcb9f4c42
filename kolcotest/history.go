package kolcotest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
)

// history returns a random sequence of changes over pool, applicable in
// order to a placement that starts with pool[:start]: single and combined
// adds and removals and, when weighted, re-weights to 1 or 2. It never
// empties the set below one node.
func history(r *rand.Rand, pool []kolco.Node, start, steps int, weighted bool) []kolco.Change {
	in := slices.Clone(pool[:start])
	var out []kolco.Change
	for range steps {
		var c kolco.Change
		if len(in) > 1 && r.IntN(2) == 0 {
			i := r.IntN(len(in))
			c.Remove = []string{in[i].ID}
			in = slices.Delete(in, i, i+1)
		}
		for _, n := range pool {
			if !slices.ContainsFunc(in, func(m kolco.Node) bool { return m.ID == n.ID }) && r.IntN(3) == 0 {
				c.Add = append(c.Add, n)
				in = append(in, n)
				break
			}
		}
		if weighted && r.IntN(3) == 0 {
			n := in[r.IntN(len(in))]
			n.Weight = float64(1 + r.IntN(2))
			c.Update = []kolco.Node{n}
			for i := range in {
				if in[i].ID == n.ID {
					in[i] = n
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// sameHere fails t unless p and q place the keys alike: owners and
// replica lists.
func sameHere(t *testing.T, what string, p, q kolco.Placement, keys []string) {
	t.Helper()
	equalPlacement(t, what, placement(t, p, keys), placement(t, q, keys), keys)
	var a, b []kolco.Node
	for _, k := range keys[:200] {
		a, _ = p.LocateN(a[:0], k, 3)
		b, _ = q.LocateN(b[:0], k, 3)
		if !slices.EqualFunc(a, b, sameID) {
			t.Fatalf("%s: LocateN(%q, 3) = %v and %v", what, k, ids(a), ids(b))
		}
	}
}

func testHistory(t *testing.T, a Algorithm) {
	p, m := mutable(t, a, Nodes(6))
	sm, ok := p.(kolco.StateMarshaler)
	if !ok {
		t.Skip("placement has no state: its node set decides it")
	}
	if a.Restore == nil {
		t.Fatal("the placement implements kolco.StateMarshaler but Algorithm.Restore is nil")
	}
	keys := Keys(scaled(4000))
	changes := history(rand.New(rand.NewPCG(9, 10)), Nodes(16), 6, 40, a.Weighted)
	var q kolco.Placement
	for step, c := range changes {
		if err := m.Apply(c); err != nil {
			t.Fatalf("step %d: Apply(%+v): %v", step, c, err)
		}
		if step%5 == 0 { // a new process starts from the state
			var err error
			if q, err = a.Restore(p.Nodes(), sm.MarshalState()); err != nil {
				t.Fatalf("step %d: Restore: %v", step, err)
			}
		} else if err := q.(kolco.Mutable).Apply(c); err != nil {
			t.Fatalf("step %d: the restored placement refuses %+v: %v", step, c, err)
		}
		what := fmt.Sprintf("step %d, restored at step %d", step, step-step%5)
		sameHere(t, what, p, q, keys)
		if got := q.(kolco.StateMarshaler).MarshalState(); !slices.Equal(got, sm.MarshalState()) {
			t.Fatalf("%s: the states differ", what)
		}
		if _, ok := p.(kolco.Identity); ok {
			fp, _ := kolco.Fingerprint(p)
			fq, _ := kolco.Fingerprint(q)
			if fp != fq {
				t.Fatalf("%s: fingerprints %s and %s", what, fp, fq)
			}
		}
	}
}
