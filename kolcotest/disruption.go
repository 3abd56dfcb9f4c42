package kolcotest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
)

// rng returns the suite's fixed random source, so that every run shuffles
// the same way.
func rng() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

func testOrder(t *testing.T, a Algorithm) {
	if !a.OrderIndependent {
		t.Skip("not promised")
	}
	nodes := Nodes(23)
	keys := Keys(5000)
	want := placement(t, build(t, a, nodes), keys)
	r := rng()
	for i := range 3 {
		sh := slices.Clone(nodes)
		r.Shuffle(len(sh), func(i, j int) { sh[i], sh[j] = sh[j], sh[i] })
		equalPlacement(t, "New with shuffled nodes", want, placement(t, build(t, a, sh), keys), keys)
		if _, ok := build(t, a, nodes[:1]).(kolco.Mutable); !ok {
			continue
		}
		// Built by Add calls in a shuffled order, one or several at a
		// time, with a detour through a removal and a re-add.
		p := build(t, a, sh[:1])
		m := p.(kolco.Mutable)
		for j := 1; j < len(sh); j += 1 + i {
			if err := m.Add(sh[j:min(j+1+i, len(sh))]...); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.Remove(sh[0].ID, sh[5].ID); err != nil {
			t.Fatal(err)
		}
		if err := m.Add(sh[5], sh[0]); err != nil {
			t.Fatal(err)
		}
		equalPlacement(t, "built by shuffled Add calls", want, placement(t, p, keys), keys)
	}
}

// checkMove compares placements before and after a change: with minimal
// set, a key may only move onto (add) or off (remove) node id. It returns
// the moved share.
func checkMove(t *testing.T, what string, before, after []string, keys []string, id string, add, minimal bool) float64 {
	t.Helper()
	bad := 0
	for i := range before {
		if before[i] == after[i] {
			continue
		}
		if minimal && ((add && after[i] != id) || (!add && before[i] != id)) {
			if bad < 3 {
				t.Errorf("%s: key %q moved %q -> %q", what, keys[i], before[i], after[i])
			}
			bad++
		}
	}
	if !add {
		for i := range after {
			if after[i] == id {
				t.Fatalf("%s: key %q still on removed node %q", what, keys[i], id)
			}
		}
	}
	share := float64(moved(before, after)) / float64(len(keys))
	if bad > 0 {
		t.Errorf("%s: %d keys moved between unchanged nodes", what, bad)
	}
	return share
}

func testDisruptionAdd(t *testing.T, a Algorithm) {
	keys := Keys(scaled(20000))
	for _, size := range []int{1, 10} {
		nodes := Nodes(size + 1)
		newNode := nodes[size]
		base := build(t, a, nodes[:size])
		before := placement(t, base, keys)
		var after []string
		if m, ok := base.(kolco.Mutable); ok {
			if err := m.Add(newNode); err != nil {
				t.Fatal(err)
			}
			after = placement(t, base, keys)
		} else {
			after = placement(t, build(t, a, nodes), keys)
		}
		share := checkMove(t, "add", before, after, keys, newNode.ID, true, a.MinimalAdd)
		t.Logf("%s: %d -> %d nodes moves %.2f%% of keys (ideal %.2f%%)", a.Name, size, size+1, 100*share, 100/float64(size+1))
		if share == 0 {
			t.Errorf("%d -> %d nodes: the new node gets no key", size, size+1)
		}
		if size == 10 && !a.MinimalAdd && a.MaxMovedAdd > 0 && share > a.MaxMovedAdd {
			t.Errorf("10 -> 11 nodes moves %.4f of keys, bound %.4f", share, a.MaxMovedAdd)
		}
	}
}

func testDisruptionRemove(t *testing.T, a Algorithm) {
	keys := Keys(scaled(20000))
	nodes := Nodes(10)
	// Remove the first, a middle and the last node by ID and by position.
	for _, victim := range []string{nodes[0].ID, nodes[4].ID, nodes[9].ID, "node-1"} {
		p := build(t, a, nodes)
		before := placement(t, p, keys)
		var after []string
		if m, ok := p.(kolco.Mutable); ok {
			if err := m.Remove(victim); err != nil {
				t.Fatal(err)
			}
			after = placement(t, p, keys)
		} else {
			after = placement(t, build(t, a, without(nodes, victim)), keys)
		}
		share := checkMove(t, "remove "+victim, before, after, keys, victim, false, a.MinimalRemove)
		t.Logf("%s: removing %s from 10 nodes moves %.2f%% of keys (ideal %.2f%%)", a.Name, victim, 100*share, 10.0)
		if !a.MinimalRemove && a.MaxMovedRemove > 0 && share > a.MaxMovedRemove {
			t.Errorf("removing %s moves %.4f of keys, bound %.4f", victim, share, a.MaxMovedRemove)
		}
	}
	if a.MinimalAdd && a.MinimalRemove {
		testChurn(t, a, keys[:len(keys)/4])
	}
}

// testChurn applies a fixed random sequence of single adds and removals to
// one Mutable and checks minimal disruption at every step, so that
// history-dependent algorithms are checked after removals too.
func testChurn(t *testing.T, a Algorithm, keys []string) {
	total := 30
	if a.MaxNodes > 0 {
		total = min(total, a.MaxNodes)
	}
	pool, start := Nodes(total), max(1, total*2/5)
	p := build(t, a, pool[:start])
	m, ok := p.(kolco.Mutable)
	if !ok {
		return
	}
	in := map[string]bool{}
	for _, n := range pool[:start] {
		in[n.ID] = true
	}
	r := rand.New(rand.NewPCG(3, 4))
	cur := placement(t, p, keys)
	for step := range 40 {
		n := pool[r.IntN(len(pool))]
		add := !in[n.ID]
		if !add && len(in) == 1 {
			continue
		}
		var err error
		if add {
			err = m.Add(n)
		} else {
			err = m.Remove(n.ID)
		}
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		in[n.ID] = add
		if !add {
			delete(in, n.ID)
		}
		next := placement(t, p, keys)
		checkMove(t, fmt.Sprintf("churn step %d (add %v %s)", step, add, n.ID), cur, next, keys, n.ID, add, true)
		if t.Failed() {
			return
		}
		cur = next
	}
}

// testFairShare grows 10 nodes to 11 and then removes one of the 11 chosen
// at random, and holds each moved share within a percentage point of its
// ideal: 1/11 for the add, and both the removed node's share and 1/11 for
// the removal.
func testFairShare(t *testing.T, a Algorithm) {
	if !a.FairShare {
		t.Skip("not promised")
	}
	keys := Keys(scaled(40000))
	nodes := Nodes(11)
	p := build(t, a, nodes[:10])
	before := placement(t, p, keys)
	m, ok := p.(kolco.Mutable)
	if !ok {
		p, m = build(t, a, nodes), nil
	} else if err := m.Add(nodes[10]); err != nil {
		t.Fatal(err)
	}
	grown := placement(t, p, keys)
	near := func(what string, got, want float64) {
		t.Helper()
		t.Logf("%s: %s moves %.2f%% of keys (ideal %.2f%%)", a.Name, what, 100*got, 100*want)
		if math.Abs(got-want) > 0.01 {
			t.Errorf("%s moves %.2f%% of keys, more than a point from %.2f%%", what, 100*got, 100*want)
		}
	}
	share := func(before, after []string) float64 { return float64(moved(before, after)) / float64(len(keys)) }
	near("10 -> 11 nodes", share(before, grown), 1.0/11)

	victim := nodes[rand.New(rand.NewPCG(7, 8)).IntN(len(nodes))].ID
	if m != nil {
		if err := m.Remove(victim); err != nil {
			t.Fatal(err)
		}
	} else {
		p = build(t, a, without(nodes, victim))
	}
	held := 0
	for _, id := range grown {
		if id == victim {
			held++
		}
	}
	gone := share(grown, placement(t, p, keys))
	near("removing "+victim+" of 11", gone, float64(held)/float64(len(keys)))
	near("removing "+victim+" of 11", gone, 1.0/11)
}
