package dx_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/dx"
	"github.com/kolco-dev/kolco/kolcotest"
)

func owners(t *testing.T, p kolco.Placement, keys []string) []string {
	t.Helper()
	out := make([]string, len(keys))
	for i, k := range keys {
		n, err := p.Locate(k)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = n.ID
	}
	return out
}

// movedOnly fails t unless every key that changed owner between before and
// after moved onto id (onto) or off it.
func movedOnly(t *testing.T, what string, before, after []string, id string, onto bool) int {
	t.Helper()
	moved := 0
	for i := range before {
		if before[i] == after[i] {
			continue
		}
		moved++
		if onto && after[i] != id || !onto && before[i] != id {
			t.Fatalf("%s: a key moved %s -> %s", what, before[i], after[i])
		}
	}
	return moved
}

func TestCapacity(t *testing.T) {
	if _, err := dx.New(kolcotest.Nodes(5), dx.Config{Capacity: 4}); !errors.Is(err, dx.ErrCapacity) || !errors.Is(err, kolco.ErrBadConfig) {
		t.Errorf("5 nodes in 4 slots: %v", err)
	}
	for _, c := range []int{-1, 3, 12, dx.MaxCapacity * 2} {
		if _, err := dx.New(nil, dx.Config{Capacity: c}); !errors.Is(err, kolco.ErrBadConfig) {
			t.Errorf("capacity %d: %v", c, err)
		}
	}
	p, _ := dx.New(kolcotest.Nodes(3), dx.Config{Capacity: 4})
	if err := p.Add(kolco.Node{ID: "a"}, kolco.Node{ID: "b"}); !errors.Is(err, dx.ErrCapacity) {
		t.Errorf("adding 2 to 3 of 4: %v", err)
	}
	if len(p.Nodes()) != 3 {
		t.Error("a failed Add changed the node set")
	}
	if d, _ := dx.New(kolcotest.Nodes(20), dx.Config{}); d.Capacity() != 64 {
		t.Errorf("default capacity for 20 nodes = %d, want 64", d.Capacity())
	}
	if d, _ := dx.New(nil, dx.Config{}); d.Capacity() != dx.MinCapacity {
		t.Errorf("default capacity for no nodes = %d, want %d", d.Capacity(), dx.MinCapacity)
	}
}

// TestReweightMovesOnlyThatNode checks weighted DxHash's minimal
// disruption: below the top weight, a lighter node only loses keys and a
// heavier one only gains them, about in proportion.
func TestReweightMovesOnlyThatNode(t *testing.T) {
	nodes := kolcotest.Nodes(8)
	nodes[0].Weight = 4 // the top weight
	p, _ := dx.New(nodes, dx.Config{})
	keys := kolcotest.Keys(40000)
	before := owners(t, p, keys)
	if err := p.Reweight("node-3", 0.5); err != nil {
		t.Fatal(err)
	}
	lighter := owners(t, p, keys)
	off := movedOnly(t, "node-3 to weight 0.5", before, lighter, "node-3", false)
	if err := p.Reweight("node-3", 3); err != nil {
		t.Fatal(err)
	}
	on := movedOnly(t, "node-3 to weight 3", lighter, owners(t, p, keys), "node-3", true)
	// Shares 1/11 -> 0.5/10.5 -> 3/13 of the keys.
	t.Logf("moved off %d, then on %d of %d keys", off, on, len(keys))
	if off < 1500 || off > 2300 || on < 6500 || on > 8000 {
		t.Errorf("moved off %d (about 1,730) and on %d (about 7,330)", off, on)
	}
}

// TestSparseSlots checks lookups where most keys need many probes and some
// run past the bound: every key finds the one node, and an add and a
// removal still move keys only onto and off the changed node.
func TestSparseSlots(t *testing.T) {
	nodes := kolcotest.Nodes(3)
	p, _ := dx.New(nodes[:1], dx.Config{Capacity: 1024})
	keys := kolcotest.Keys(3000)
	one := owners(t, p, keys)
	for i, id := range one {
		if id != nodes[0].ID {
			t.Fatalf("key %q on %s with one node", keys[i], id)
		}
	}
	if err := p.Add(nodes[1]); err != nil {
		t.Fatal(err)
	}
	two := owners(t, p, keys)
	movedOnly(t, "add", one, two, nodes[1].ID, true)
	if err := p.Add(nodes[2]); err != nil {
		t.Fatal(err)
	}
	if err := p.Remove(nodes[0].ID); err != nil {
		t.Fatal(err)
	}
	_ = owners(t, p, keys)
}

// TestRemoveThenAddRestores checks the documented history: removals undone
// in reverse order give every key back.
func TestRemoveThenAddRestores(t *testing.T) {
	nodes := kolcotest.Nodes(10)
	p, _ := dx.New(nodes, dx.Config{})
	keys := kolcotest.Keys(5000)
	before := owners(t, p, keys)
	_ = p.Remove("node-3")
	_ = p.Remove("node-7")
	_ = p.Add(nodes[7])
	_ = p.Add(nodes[3])
	if !slices.Equal(before, owners(t, p, keys)) {
		t.Error("undoing removals in reverse order did not restore the placement")
	}
}

func TestRestoreRefusesOtherStates(t *testing.T) {
	p, _ := dx.New(kolcotest.Nodes(4), dx.Config{Capacity: 8})
	_ = p.Remove("node-1")
	good, nodes := p.MarshalState(), p.Nodes()
	if _, err := dx.Restore(nodes, dx.Config{}, good); err != nil {
		t.Fatalf("the state itself: %v", err)
	}
	heavy := slices.Clone(nodes)
	heavy[0].Weight = 2 // above the state's top weight, 1
	for _, c := range []struct {
		name  string
		nodes []kolco.Node
		cfg   dx.Config
		data  []byte
	}{
		{"OtherNodes", kolcotest.Nodes(3), dx.Config{}, good},
		{"OtherCapacity", nodes, dx.Config{Capacity: 16}, good},
		{"HeavierThanTop", heavy, dx.Config{}, good},
		{"Trailing", nodes, dx.Config{}, append(slices.Clone(good), 1)},
		{"Truncated", nodes, dx.Config{}, good[:len(good)-2]},
		{"Garbage", nodes, dx.Config{}, []byte{1, 2, 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := dx.Restore(c.nodes, c.cfg, c.data); !errors.Is(err, kolco.ErrBadState) {
				t.Errorf("error %v, want ErrBadState", err)
			}
		})
	}
}

// TestPinned pins the placement of 1000 keys on 10 nodes after a few
// changes. The value is the package's own output, recorded when the
// package was written: it changes only if placement changes, which breaks
// every deployed cluster.
func TestPinned(t *testing.T) {
	p, err := dx.New(kolcotest.Nodes(10), dx.Config{})
	if err != nil {
		t.Fatal(err)
	}
	_ = p.Remove("node-2", "node-9")
	_ = p.Add(kolco.Node{ID: "node-x", Weight: 2})
	got, err := kolcotest.Fingerprint(p, 1000)
	if err != nil {
		t.Fatal(err)
	}
	const want = 0x91a32cefb25e461f
	if got != want {
		t.Errorf("fingerprint %#x, pinned %#x", got, uint64(want))
	}
}
