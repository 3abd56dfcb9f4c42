package jumpback_test

import (
	"errors"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/jumpback"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/kolcotest"
)

func algorithm() kolcotest.Algorithm {
	return kolcotest.Algorithm{
		Name: "jumpback",
		New:  func(nodes []kolco.Node) (kolco.Placement, error) { return jumpback.New(nodes, jumpback.Config{}) },
		Restore: func(nodes []kolco.Node, state []byte) (kolco.Placement, error) {
			return jumpback.Restore(nodes, jumpback.Config{}, state)
		},
		MinimalAdd:    true,
		MinimalRemove: true,
		Undo:          true,
		Balance:       func(int) float64 { return 1 },
		NewHashed: func(nodes []kolco.Node, h keyhash.Func) (kolco.Placement, error) {
			return jumpback.New(nodes, jumpback.Config{Hash: h})
		},
		// Every node's share is 1/N: the loads differ from the mean by
		// sampling noise alone, 0.7% for 18,000 keys a node (see doc.go).
		MaxOverMean: 1.10,
		MinOverMean: 0.90,
	}
}

func TestProperties(t *testing.T) { kolcotest.Run(t, algorithm()) }

func FuzzOps(f *testing.F) {
	kolcotest.FuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { kolcotest.Ops(t, algorithm(), data) })
}

func BenchmarkJumpBack(b *testing.B) { kolcotest.Benchmark(b, algorithm()) }

func TestWeightsRejected(t *testing.T) {
	if _, err := jumpback.New([]kolco.Node{{ID: "a", Weight: 2}}, jumpback.Config{}); !errors.Is(err, kolco.ErrBadWeight) {
		t.Fatalf("New with weight 2: %v", err)
	}
}

// TestNoRemovalIsBucket checks that without removals the owner of a key is
// the node on bucket Bucket(hash(key), N), buckets in ID order.
func TestNoRemovalIsBucket(t *testing.T) {
	j, _ := jumpback.New(kolcotest.Nodes(37), jumpback.Config{})
	sorted := j.Nodes()
	for _, k := range kolcotest.Keys(3000) {
		got, _ := j.Locate(k)
		if want := sorted[jumpback.Bucket(keyhash.XXH3(k), len(sorted))]; got.ID != want.ID {
			t.Fatalf("Locate(%q) = %s, want %s", k, got.ID, want.ID)
		}
	}
}

// TestPinned pins the placement of 1000 keys on 10 nodes (after a few
// changes for history-dependent placements). The value is the package's
// own output, recorded when the package was written: it changes only if
// placement changes, which breaks every deployed cluster.
func TestPinned(t *testing.T) {
	p, err := jumpback.New(kolcotest.Nodes(10), jumpback.Config{})
	if err != nil {
		t.Fatal(err)
	}
	_ = p.Remove("node-2", "node-9")
	_ = p.Add(kolco.Node{ID: "node-x"})
	got, err := kolcotest.Fingerprint(p, 1000)
	if err != nil {
		t.Fatal(err)
	}
	const want = 0x436387bb4ff59ce0
	if got != want {
		t.Errorf("fingerprint %#x, pinned %#x", got, uint64(want))
	}
}
