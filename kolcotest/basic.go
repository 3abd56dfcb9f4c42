package kolcotest

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
)

func testEmpty(t *testing.T, a Algorithm) {
	for _, nodes := range [][]kolco.Node{nil, {}} {
		p, err := a.New(nodes)
		if err != nil {
			if !errors.Is(err, kolco.ErrNoNodes) {
				t.Errorf("New(empty) error %v does not wrap ErrNoNodes", err)
			}
			continue
		}
		checkNoNodes(t, p)
	}
}

// checkNoNodes asserts that every lookup on p fails with ErrNoNodes.
func checkNoNodes(t *testing.T, p kolco.Placement) {
	t.Helper()
	if _, err := p.Locate("k"); !errors.Is(err, kolco.ErrNoNodes) {
		t.Errorf("Locate on empty placement: error %v, want ErrNoNodes", err)
	}
	if l, ok := p.(kolco.IDLocator); ok {
		if id, err := l.LocateID("k"); !errors.Is(err, kolco.ErrNoNodes) || id != "" {
			t.Errorf("LocateID on empty placement = %q, %v; want ErrNoNodes", id, err)
		}
	}
	if l, ok := p.(kolco.IndexLocator); ok {
		if i, err := l.LocateIndex("k"); !errors.Is(err, kolco.ErrNoNodes) || i != -1 {
			t.Errorf("LocateIndex on empty placement = %d, %v; want -1, ErrNoNodes", i, err)
		}
	}
	for _, n := range []int{1, 3} {
		got, err := p.LocateN(nil, "k", n)
		if !errors.Is(err, kolco.ErrNoNodes) || len(got) != 0 {
			t.Errorf("LocateN(n=%d) on empty placement = %v, %v; want ErrNoNodes", n, got, err)
		}
	}
	// n < 1 on an empty set may report either fault.
	if _, err := p.LocateN(nil, "k", 0); !errors.Is(err, kolco.ErrNoNodes) && !errors.Is(err, kolco.ErrBadCount) {
		t.Errorf("LocateN(n=0) on empty placement: error %v", err)
	}
	if ns := p.Nodes(); len(ns) != 0 {
		t.Errorf("Nodes() on empty placement = %v", ns)
	}
}

func testBadNodes(t *testing.T, a Algorithm) {
	base := Nodes(3)
	cases := []struct {
		name string
		add  kolco.Node
		want error
	}{
		{"EmptyID", kolco.Node{ID: ""}, kolco.ErrBadNodeID},
		{"DuplicateID", kolco.Node{ID: base[1].ID}, kolco.ErrDuplicateNode},
		{"NegativeWeight", kolco.Node{ID: "neg", Weight: -1}, kolco.ErrBadWeight},
		{"NaNWeight", kolco.Node{ID: "nan", Weight: math.NaN()}, kolco.ErrBadWeight},
		{"InfWeight", kolco.Node{ID: "inf", Weight: math.Inf(1)}, kolco.ErrBadWeight},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nodes := append(slices.Clone(base), c.add)
			p, err := a.New(nodes)
			if !errors.Is(err, c.want) {
				t.Errorf("New with %+v = %v, %v; want error wrapping %v", c.add, p, err, c.want)
			}
		})
	}
}

func testDeterminism(t *testing.T, a Algorithm) {
	nodes := Nodes(17)
	keys := Keys(5000)
	p1, p2 := build(t, a, nodes), build(t, a, nodes)
	first := placement(t, p1, keys)
	equalPlacement(t, "same instance, second lookup", first, placement(t, p1, keys), keys)
	equalPlacement(t, "second instance", first, placement(t, p2, keys), keys)
	var d1, d2 []kolco.Node
	for _, k := range keys[:500] {
		var err1, err2 error
		d1, err1 = p1.LocateN(d1[:0], k, 4)
		d2, err2 = p2.LocateN(d2[:0], k, 4)
		if err1 != nil || err2 != nil {
			t.Fatalf("LocateN(%q, 4): %v, %v", k, err1, err2)
		}
		if !slices.EqualFunc(d1, d2, sameID) {
			t.Fatalf("LocateN(%q, 4) differs between instances: %v vs %v", k, ids(d1), ids(d2))
		}
	}
}

func testPayload(t *testing.T, a Algorithm) {
	nodes := Nodes(5)
	p := build(t, a, nodes)
	got := p.Nodes()
	if !slices.IsSortedFunc(got, func(x, y kolco.Node) int { return cmpID(x, y) }) {
		t.Errorf("Nodes() not sorted by ID: %v", ids(got))
	}
	if len(got) != len(nodes) {
		t.Fatalf("Nodes() has %d nodes, want %d", len(got), len(nodes))
	}
	for _, n := range got {
		if n.Addr != addrOf(n.ID) {
			t.Errorf("Nodes(): node %q has Addr %q, want %q", n.ID, n.Addr, addrOf(n.ID))
		}
	}
	got[0].ID = "changed"
	if p.Nodes()[0].ID == "changed" {
		t.Error("Nodes() returns the placement's own slice, not a copy")
	}
	for _, k := range Keys(200) {
		n, err := p.Locate(k)
		if err != nil {
			t.Fatal(err)
		}
		if n.Addr != addrOf(n.ID) {
			t.Fatalf("Locate(%q) = %+v: Addr not carried", k, n)
		}
	}
}

func testReplicas(t *testing.T, a Algorithm) {
	for _, size := range []int{1, 2, 7} {
		nodes := Nodes(size)
		p := build(t, a, nodes)
		all := ids(p.Nodes())
		for _, k := range Keys(300) {
			owner, err := p.Locate(k)
			if err != nil {
				t.Fatal(err)
			}
			var prev []kolco.Node
			for n := 1; n <= size+2; n++ {
				got, err := p.LocateN(nil, k, n)
				if err != nil {
					t.Fatalf("LocateN(%q, %d): %v", k, n, err)
				}
				if want := min(n, size); len(got) != want {
					t.Fatalf("%d nodes: LocateN(%q, %d) has %d owners, want %d", size, k, n, len(got), want)
				}
				if got[0].ID != owner.ID {
					t.Fatalf("LocateN(%q, %d)[0] = %q, Locate = %q", k, n, got[0].ID, owner.ID)
				}
				if !slices.EqualFunc(prev, got[:len(prev)], sameID) {
					t.Fatalf("LocateN(%q, %d) = %v is not extended by n=%d: %v", k, n-1, ids(prev), n, ids(got))
				}
				seen := map[string]bool{}
				for _, o := range got {
					if seen[o.ID] {
						t.Fatalf("LocateN(%q, %d) repeats %q: %v", k, n, o.ID, ids(got))
					}
					seen[o.ID] = true
				}
				if n >= size {
					s := ids(got)
					slices.Sort(s)
					if !slices.Equal(s, all) {
						t.Fatalf("LocateN(%q, %d) = %v, want every node once", k, n, ids(got))
					}
				}
				prev = got
			}
			// dst is appended to, not overwritten.
			pre := []kolco.Node{{ID: "prefix"}}
			got, err := p.LocateN(pre, k, 2)
			if err != nil || len(got) != 1+min(2, size) || got[0].ID != "prefix" || got[1].ID != owner.ID {
				t.Fatalf("LocateN with a non-empty dst = %v, %v", ids(got), err)
			}
		}
	}
}

func testBadCount(t *testing.T, a Algorithm) {
	p := build(t, a, Nodes(3))
	for _, n := range []int{0, -1, math.MinInt} {
		got, err := p.LocateN(nil, "k", n)
		if !errors.Is(err, kolco.ErrBadCount) || len(got) != 0 {
			t.Errorf("LocateN(n=%d) = %v, %v; want ErrBadCount", n, ids(got), err)
		}
	}
	if _, err := p.LocateN(nil, "k", math.MaxInt); err != nil {
		t.Errorf("LocateN(n=MaxInt): %v", err)
	}
}

func testAllocs(t *testing.T, a Algorithm) {
	if a.SkipAllocs {
		t.Skip("lookups allocate in this build")
	}
	for _, size := range []int{1, 10, 200} {
		p := build(t, a, Nodes(size))
		dst := make([]kolco.Node, 0, 8)
		key := "user:1234567"
		if n := testing.AllocsPerRun(200, func() { _, _ = p.Locate(key) }); n != 0 {
			t.Errorf("%d nodes: Locate allocates %v times", size, n)
		}
		if l, ok := p.(kolco.IDLocator); ok {
			if n := testing.AllocsPerRun(200, func() { _, _ = l.LocateID(key) }); n != 0 {
				t.Errorf("%d nodes: LocateID allocates %v times", size, n)
			}
		}
		if l, ok := p.(kolco.IndexLocator); ok {
			if n := testing.AllocsPerRun(200, func() { _, _ = l.LocateIndex(key) }); n != 0 {
				t.Errorf("%d nodes: LocateIndex allocates %v times", size, n)
			}
		}
		for _, r := range []int{1, 3, 8} {
			if n := testing.AllocsPerRun(200, func() { dst, _ = p.LocateN(dst[:0], key, r) }); n != 0 {
				t.Errorf("%d nodes: LocateN(dst[:0], n=%d) allocates %v times", size, r, n)
			}
		}
	}
}

// checkLocators checks that LocateID and LocateIndex, where p has them,
// agree with Locate's owner of key, id; nodes is p.Nodes().
func checkLocators(t *testing.T, p kolco.Placement, key, id string, nodes []kolco.Node) {
	t.Helper()
	if l, ok := p.(kolco.IDLocator); ok {
		if got, err := l.LocateID(key); err != nil || got != id {
			t.Fatalf("LocateID(%q) = %q, %v; Locate says %q", key, got, err, id)
		}
	}
	l, ok := p.(kolco.IndexLocator)
	if !ok {
		return
	}
	i, err := l.LocateIndex(key)
	if err != nil || i < 0 || i >= len(nodes) || nodes[i].ID != id {
		t.Fatalf("LocateIndex(%q) = %d, %v; Locate says %q, at %d of Nodes()", key, i, err, id,
			slices.IndexFunc(nodes, func(n kolco.Node) bool { return n.ID == id }))
	}
}

func sameID(x, y kolco.Node) bool { return x.ID == y.ID }

func cmpID(x, y kolco.Node) int {
	switch {
	case x.ID < y.ID:
		return -1
	case x.ID > y.ID:
		return 1
	}
	return 0
}

func ids(nodes []kolco.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.ID
	}
	return out
}
