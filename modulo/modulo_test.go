package modulo_test

import (
	"errors"
	"math"
	"sort"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/modulo"
)

func TestProperties(t *testing.T) {
	kolcotest.Run(t, kolcotest.Algorithm{
		Name:             "modulo",
		New:              func(nodes []kolco.Node) (kolco.Placement, error) { return modulo.New(nodes, modulo.Config{}) },
		OrderIndependent: true,
		Undo:             true,
		Weighted:         true,
		Balance:          func(int) float64 { return 1 },
		MaxMovedAdd:      0.95,
		MaxMovedRemove:   0.95,
		NewHashed: func(nodes []kolco.Node, h keyhash.Func) (kolco.Placement, error) {
			return modulo.New(nodes, modulo.Config{Hash: h})
		},
		// Every node's share is 1/N: the loads differ from the mean by
		// sampling noise alone, 0.7% for 18,000 keys a node (see doc.go).
		MaxOverMean: 1.10,
		MinOverMean: 0.90,
	})
}

// reference is the scheme written out plainly: the IDs sorted, each
// repeated round(weight) times, and the key's hash modulo their number.
func reference(nodes []kolco.Node, key string) string {
	sorted := append([]kolco.Node(nil), nodes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	var slots []string
	for _, n := range sorted {
		w := n.Weight
		if w == 0 {
			w = 1
		}
		for r := 0; r < int(math.Max(1, math.Round(w))); r++ {
			slots = append(slots, n.ID)
		}
	}
	return slots[keyhash.XXH3(key)%uint64(len(slots))]
}

func TestKnownAnswers(t *testing.T) {
	sets := map[string][]kolco.Node{
		"one":      {{ID: "a"}},
		"unsorted": {{ID: "c"}, {ID: "a"}, {ID: "b"}},
		"weighted": {{ID: "x", Weight: 3}, {ID: "y", Weight: 0.4}, {ID: "z", Weight: 1.5}},
		"ten":      kolcotest.Nodes(10),
	}
	for name, nodes := range sets {
		t.Run(name, func(t *testing.T) {
			m, err := modulo.New(nodes, modulo.Config{})
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range kolcotest.Keys(2000) {
				got, err := m.Locate(k)
				if err != nil {
					t.Fatal(err)
				}
				if want := reference(nodes, k); got.ID != want {
					t.Fatalf("Locate(%q) = %q, want %q", k, got.ID, want)
				}
			}
		})
	}
}

// TestDisruptionMatchesTheory measures the share of keys that move from N
// to N+1 nodes against N/(N+1), the figure that motivates consistent hashing.
func TestDisruptionMatchesTheory(t *testing.T) {
	keys := kolcotest.Keys(50000)
	for _, n := range []int{3, 10, 50} {
		nodes := kolcotest.Nodes(n + 1)
		before, _ := modulo.New(nodes[:n], modulo.Config{})
		after, _ := modulo.New(nodes, modulo.Config{})
		moved := 0
		for _, k := range keys {
			a, _ := before.Locate(k)
			b, _ := after.Locate(k)
			if a.ID != b.ID {
				moved++
			}
		}
		share := float64(moved) / float64(len(keys))
		want := float64(n) / float64(n+1)
		t.Logf("%d -> %d nodes: %.2f%% of keys moved (theory %.2f%%)", n, n+1, 100*share, 100*want)
		if math.Abs(share-want) > 0.02 {
			t.Errorf("%d -> %d nodes: moved share %.4f, theory %.4f", n, n+1, share, want)
		}
	}
}

func TestTooManySlots(t *testing.T) {
	_, err := modulo.New([]kolco.Node{{ID: "a", Weight: modulo.MaxSlots + 1}}, modulo.Config{})
	if !errors.Is(err, kolco.ErrBadWeight) {
		t.Fatalf("error %v, want ErrBadWeight", err)
	}
	m, _ := modulo.New([]kolco.Node{{ID: "a", Weight: modulo.MaxSlots}}, modulo.Config{})
	if err := m.Add(kolco.Node{ID: "b"}); !errors.Is(err, kolco.ErrBadWeight) {
		t.Fatalf("Add beyond MaxSlots: error %v, want ErrBadWeight", err)
	}
	if got := len(m.Nodes()); got != 1 {
		t.Fatalf("failed Add left %d nodes", got)
	}
}

func TestRepetitions(t *testing.T) {
	for _, c := range []struct {
		w    float64
		want int
	}{{0.1, 1}, {1, 1}, {1.4, 1}, {1.5, 2}, {3, 3}, {1e300, modulo.MaxSlots + 1}} {
		if got := modulo.Repetitions(c.w); got != c.want {
			t.Errorf("Repetitions(%v) = %d, want %d", c.w, got, c.want)
		}
	}
}
