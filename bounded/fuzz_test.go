package bounded

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kolco-dev/kolco"
)

// FuzzAssign builds rings from arbitrary ε, points per weight and node counts
// and places arbitrary keys: no panic or hang, errors are sentinels, and
// every node stays within its capacity.
func FuzzAssign(f *testing.F) {
	f.Add(0.25, 0, 3, 100, "k")
	f.Add(0.0, 1, 0, 5, "")          // no nodes
	f.Add(-1.0, 0, 2, 5, "x")        // bad epsilon
	f.Add(1e-12, 1, 7, 300, "{tag}") // tiny epsilon: capacities sum to the key count
	f.Add(1e300, 2, 2, 10, "y")      // huge epsilon
	f.Fuzz(func(t *testing.T, eps float64, points, nodes, keys int, prefix string) {
		nodes, keys, points = nodes%40, keys%2000, points%200
		ns := make([]kolco.Node, max(0, nodes))
		for i := range ns {
			ns[i] = kolco.Node{ID: fmt.Sprint("n", i), Weight: float64(1 + i%3)}
		}
		r, err := New(ns, Config{Epsilon: eps, VNodes: points})
		if err != nil {
			if !errors.Is(err, kolco.ErrBadConfig) {
				t.Fatalf("New: error %v is not ErrBadConfig", err)
			}
			return
		}
		ks := make([]string, max(0, keys))
		for i := range ks {
			ks[i] = fmt.Sprint(prefix, i)
		}
		a, err := r.Assign(ks)
		if err != nil {
			if !errors.Is(err, kolco.ErrNoNodes) || len(ns) > 0 {
				t.Fatalf("Assign: %v", err)
			}
			return
		}
		for j := range a.Nodes {
			if a.Load[j] > a.Capacity[j] {
				t.Fatalf("node %d: load %d over capacity %d", j, a.Load[j], a.Capacity[j])
			}
		}
		if len(ns) > 0 {
			l, err := r.Acquire(prefix)
			if err != nil {
				t.Fatal(err)
			}
			l.Release()
		}
	})
}
