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
		Name:          "jumpback",
		New:           func(nodes []kolco.Node) (kolco.Placement, error) { return jumpback.New(nodes, jumpback.Config{}) },
		MinimalAdd:    true,
		MinimalRemove: true,
		Balance:       func(int) float64 { return 1 },
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

// TestNoRemovalIsHash checks that without removals the owner of a key is
// the node on bucket Hash(hash(key), N), buckets in ID order.
func TestNoRemovalIsHash(t *testing.T) {
	j, _ := jumpback.New(kolcotest.Nodes(37), jumpback.Config{})
	sorted := j.Nodes()
	for _, k := range kolcotest.Keys(3000) {
		got, _ := j.Locate(k)
		if want := sorted[jumpback.Hash(keyhash.XXH3(k), len(sorted))]; got.ID != want.ID {
			t.Fatalf("Locate(%q) = %s, want %s", k, got.ID, want.ID)
		}
	}
}

// TestPinned pins a fingerprint of the placement (the package's own output,
// recorded when it was written) so that any change of the bucket function
// or the replacement rule shows up.
func TestPinned(t *testing.T) {
	j, _ := jumpback.New(kolcotest.Nodes(10), jumpback.Config{})
	_ = j.Remove("node-2", "node-9")
	_ = j.Add(kolco.Node{ID: "node-x"})
	h := uint64(14695981039346656037)
	for _, k := range kolcotest.Keys(1000) {
		n, _ := j.Locate(k)
		h = (h ^ keyhash.FNV1a(n.ID)) * 1099511628211
	}
	const want = 0xa5cdbfbf9041fcd8
	if h != want {
		t.Errorf("fingerprint %#x, pinned %#x", h, uint64(want))
	}
}
