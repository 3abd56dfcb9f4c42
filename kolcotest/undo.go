package kolcotest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
)

// look is what the undo check compares: everything a reader or a later
// change can see of a placement.
type look struct {
	owners   []string
	replicas [][]string
	print    string // kolco.Fingerprint, if the placement has an identity
	state    []byte // MarshalState, if the placement keeps one
}

// lookAt records p's look over keys (replica lists over the first 200).
func lookAt(t *testing.T, p kolco.Placement, keys []string) look {
	t.Helper()
	l := look{owners: placement(t, p, keys)}
	var dst []kolco.Node
	for _, k := range keys[:min(200, len(keys))] {
		var err error
		if dst, err = p.LocateN(dst[:0], k, 3); err != nil {
			t.Fatalf("LocateN(%q, 3): %v", k, err)
		}
		l.replicas = append(l.replicas, ids(dst))
	}
	if _, ok := p.(kolco.Identity); ok {
		l.print, _ = kolco.Fingerprint(p)
	}
	if m, ok := p.(kolco.StateMarshaler); ok {
		l.state = m.MarshalState()
	}
	return l
}

// sameLook reports how many keys changed owner between want and got and
// whether anything else a reader or a later change could see differs:
// a replica list, the fingerprint or the state.
func sameLook(want, got look) (moved int, other string) {
	for i := range want.owners {
		if want.owners[i] != got.owners[i] {
			moved++
		}
	}
	switch {
	case !slices.EqualFunc(want.replicas, got.replicas, slices.Equal):
		other = "replica lists"
	case want.print != got.print:
		other = "fingerprint"
	case !slices.Equal(want.state, got.state):
		other = "state"
	}
	return moved, other
}

// testUndo checks that undoing the last change restores the placement:
// removing the node just added, and adding back the node just removed,
// each with nothing in between, and a second add undone before the first.
// It starts from a fresh placement and from points along a random history
// of changes, since a history-dependent algorithm is most at risk there.
// Without the promise (Algorithm.Undo) it logs how many keys an undo moved
// and holds that to Algorithm.MaxMovedUndo if set.
func testUndo(t *testing.T, a Algorithm) {
	pool := Nodes(14)
	if a.MaxNodes > 0 && a.MaxNodes < len(pool) {
		pool = pool[:a.MaxNodes]
	}
	start := len(pool) * 2 / 3
	p, m := mutable(t, a, pool[:start])
	keys := Keys(scaled(2000))
	changes := history(rand.New(rand.NewPCG(11, 12)), pool, start, 12, false)
	worst := 0.0
	for step := -1; step < len(changes); step++ {
		if step >= 0 {
			if err := m.Apply(changes[step]); err != nil {
				t.Fatalf("history step %d: Apply(%+v): %v", step, changes[step], err)
			}
		}
		if step%4 != 3 && step != -1 {
			continue
		}
		in, out := splitPool(p.Nodes(), pool)
		for _, u := range undos(in, out) {
			before := lookAt(t, p, keys)
			if err := u.do(m); err != nil {
				t.Fatalf("after step %d: %s: %v", step, u.name, err)
			}
			moved, other := sameLook(before, lookAt(t, p, keys))
			share := float64(moved) / float64(len(keys))
			worst = max(worst, share)
			what := fmt.Sprintf("after history step %d: %s", step, u.name)
			if a.Undo && (moved > 0 || other != "") {
				t.Errorf("%s moves %d of %d keys; other differences: %q", what, moved, len(keys), other)
			}
			if !a.Undo && a.MaxMovedUndo > 0 && share > a.MaxMovedUndo {
				t.Errorf("%s moves %.4f of keys, bound %.4f", what, share, a.MaxMovedUndo)
			}
		}
	}
	t.Logf("%s: an undone change moves at most %.2f%% of keys (promised: %v)", a.Name, 100*worst, a.Undo)
}

// splitPool returns the nodes of pool in the placement and those out of it.
func splitPool(nodes, pool []kolco.Node) (in, out []kolco.Node) {
	for _, n := range pool {
		if slices.ContainsFunc(nodes, func(m kolco.Node) bool { return m.ID == n.ID }) {
			in = append(in, n)
		} else {
			out = append(out, n)
		}
	}
	return in, out
}

// undo is a sequence of changes that ends where it began.
type undo struct {
	name string
	do   func(m kolco.Mutable) error
}

// undos returns the undone changes tried on a placement holding in, with
// out available to add: add then remove one node, and two, the second
// removed first; remove one node (two of them in turn) and add it back.
func undos(in, out []kolco.Node) []undo {
	var us []undo
	if len(out) > 0 {
		x := out[len(out)/2]
		us = append(us, undo{"add " + x.ID + ", remove it", func(m kolco.Mutable) error {
			if err := m.Add(x); err != nil {
				return err
			}
			return m.Remove(x.ID)
		}})
	}
	if len(out) > 1 {
		x, y := out[0], out[len(out)-1]
		us = append(us, undo{"add " + x.ID + ", add " + y.ID + ", remove " + y.ID + ", remove " + x.ID, func(m kolco.Mutable) error {
			for _, c := range []kolco.Change{{Add: []kolco.Node{x}}, {Add: []kolco.Node{y}}, {Remove: []string{y.ID}}, {Remove: []string{x.ID}}} {
				if err := m.Apply(c); err != nil {
					return err
				}
			}
			return nil
		}})
	}
	if len(in) > 1 {
		for _, x := range []kolco.Node{in[0], in[len(in)-1]} {
			us = append(us, undo{"remove " + x.ID + ", add it back", func(m kolco.Mutable) error {
				if err := m.Remove(x.ID); err != nil {
					return err
				}
				return m.Add(x)
			}})
		}
	}
	return us
}
