package kolcotest

import (
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
)

// testDiff applies the change between the node set and a target, with
// removals, additions and updates of weight, zone and address, and checks
// that the placement then holds exactly the target's nodes and, for an
// order-independent algorithm, places keys as a fresh build of the target.
func testDiff(t *testing.T, a Algorithm) {
	nodes := Nodes(8)
	p, m := mutable(t, a, nodes)
	target := append(slices.Clone(nodes[2:]), Nodes(11)[8:]...)
	target[0].Addr = "moved-" + target[0].ID
	target[1].Zone = "other-zone"
	if a.Weighted {
		target[2].Weight = 2
	}
	c := kolco.Diff(p.Nodes(), target)
	if len(c.Remove) != 2 || len(c.Add) != 3 {
		t.Fatalf("Diff = %+v", c)
	}
	if err := m.Apply(c); err != nil {
		t.Fatalf("Apply(Diff): %v", err)
	}
	got, want := p.Nodes(), slices.Clone(target)
	slices.SortFunc(want, cmpID)
	if len(got) != len(want) {
		t.Fatalf("after Apply(Diff): %v, want %v", ids(got), ids(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ID != w.ID || g.EffectiveWeight() != w.EffectiveWeight() || g.Zone != w.Zone || g.Addr != w.Addr {
			t.Errorf("after Apply(Diff): node %+v, want %+v", g, w)
		}
	}
	if again := kolco.Diff(p.Nodes(), target); !again.Empty() {
		t.Errorf("a second Diff after Apply is not empty: %+v", again)
	}
	if a.OrderIndependent {
		keys := Keys(5000)
		equalPlacement(t, "after Apply(Diff)", placement(t, build(t, a, target), keys), placement(t, p, keys), keys)
	}
}

// testPayloadUpdate changes the address and zone of nodes: no key may move,
// since neither is hashed, and lookups must return the new values.
func testPayloadUpdate(t *testing.T, a Algorithm) {
	nodes := Nodes(7)
	p, m := mutable(t, a, nodes)
	keys := Keys(5000)
	before := placement(t, p, keys)
	var c kolco.Change
	for i, n := range nodes {
		if i%2 == 0 {
			n.Addr = "new-" + n.ID
			n.Zone = "zone-" + n.ID
			c.Update = append(c.Update, n)
		}
	}
	updated := map[string]kolco.Node{}
	for _, n := range c.Update {
		updated[n.ID] = n
	}
	// Locate answers with the placement's own node: one answered before
	// the change must stay as it was, since a change builds new nodes.
	var kept *kolco.Node
	for _, k := range keys {
		if n, err := p.Locate(k); err == nil && updated[n.ID].ID != "" {
			kept = n
			break
		}
	}
	if kept == nil {
		t.Fatal("no key placed on an updated node")
	}
	was := *kept
	if err := m.Apply(c); err != nil {
		t.Fatalf("Apply(%+v): %v", c, err)
	}
	if *kept != was {
		t.Fatalf("a node Locate returned before the change became %+v; it was %+v", *kept, was)
	}
	equalPlacement(t, "after changing addresses and zones", before, placement(t, p, keys), keys)
	for _, k := range keys[:500] {
		n, err := p.Locate(k)
		if err != nil {
			t.Fatal(err)
		}
		if u, ok := updated[n.ID]; ok && (n.Addr != u.Addr || n.Zone != u.Zone) {
			t.Fatalf("Locate(%q) = %+v, want the updated %+v", k, n, u)
		}
	}
}
