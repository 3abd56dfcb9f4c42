package bounded

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kolco-dev/kolco"
)

// workload yields request keys: with probability hot the key "hot",
// otherwise a key drawn from a Zipf law (s = 1.1) over 100000 keys, or
// uniformly when zipf is false.
type workload struct {
	rng  *rand.Rand
	zipf *rand.Zipf
	hot  float64
}

func newWorkload(seed uint64, hot float64, zipf bool) *workload {
	w := &workload{rng: rand.New(rand.NewPCG(seed, 99)), hot: hot}
	if zipf {
		w.zipf = rand.NewZipf(w.rng, 1.1, 1, 99999)
	}
	return w
}

func (w *workload) next() string {
	if w.rng.Float64() < w.hot {
		return "hot"
	}
	if w.zipf != nil {
		return fmt.Sprint("k", w.zipf.Uint64())
	}
	return fmt.Sprint("k", w.rng.IntN(100000))
}

// simulate keeps a window of requests in flight: each step acquires one
// and, once the window is full, releases the oldest. It returns the
// highest load any node reached, and the same for a plain ring (Locate,
// no bound) fed the same keys.
func simulate(t *testing.T, r *Ring, w *workload, window, steps int) (bounded, plain int64) {
	t.Helper()
	var leases []Lease
	var plainOwners []string
	plainLoad := map[string]int64{}
	for range steps {
		key := w.next()
		l, err := r.Acquire(key)
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, l)
		nd, _ := r.Locate(key)
		plainOwners = append(plainOwners, nd.ID)
		plainLoad[nd.ID]++
		for _, v := range r.Loads() {
			bounded = max(bounded, v)
		}
		plain = max(plain, plainLoad[nd.ID])
		if len(leases) == window {
			leases[0].Release()
			leases = leases[1:]
			plainLoad[plainOwners[0]]--
			plainOwners = plainOwners[1:]
		}
	}
	for _, l := range leases {
		l.Release()
	}
	return bounded, plain
}

// TestHotKeyDoesNotSinkItsNode: one key carries 30% of all requests. On a
// plain ring its node holds about 30% + 1/n of the requests in flight; with
// bounded loads no node holds more than ceil((1+ε) * in flight / n).
func TestHotKeyDoesNotSinkItsNode(t *testing.T) {
	for _, c := range []struct {
		name string
		hot  float64
		zipf bool
	}{
		{"Hot30Uniform", 0.30, false},
		{"Hot30Zipf", 0.30, true},
		{"Zipf", 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			const nodes, window, steps = 10, 500, 4000
			r, err := New(mkNodes(nodes), Config{})
			if err != nil {
				t.Fatal(err)
			}
			// Requests in flight never exceed the window, so this is the
			// largest capacity any Acquire computed.
			bound, _ := r.Capacity("node-0000", window)
			got, plain := simulate(t, r, newWorkload(7, c.hot, c.zipf), window, steps)
			t.Logf("%d nodes, %d in flight: max node load %d with bounded loads (capacity %d), %d on a plain ring",
				nodes, window, got, bound, plain)
			if got > bound {
				t.Errorf("a node held %d requests, over the capacity %d", got, bound)
			}
			if c.hot > 0 && plain <= bound {
				t.Errorf("the plain ring's max load %d does not exceed %d: the workload shows nothing", plain, bound)
			}
		})
	}
}

// TestLiveLoadWithinCapacityAtEveryStep checks, after every Acquire in a
// sequential run with releases, that each node's load is within the
// capacity for the requests then in flight.
func TestLiveLoadWithinCapacityAtEveryStep(t *testing.T) {
	nodes := mkNodes(7)
	nodes[0].Weight, nodes[3].Weight = 3, 0.5
	r, _ := New(nodes, Config{Epsilon: 0.1})
	w := newWorkload(3, 0.2, true)
	rng := rand.New(rand.NewPCG(5, 6))
	var held []Lease
	for step := range 3000 {
		if len(held) > 0 && rng.IntN(3) == 0 {
			i := rng.IntN(len(held))
			held[i].Release()
			held = append(held[:i], held[i+1:]...)
			continue
		}
		l, err := r.Acquire(w.next())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
		// Sequentially, the count in flight now is the one Acquire used.
		load := r.Loads()[l.Node.ID]
		if c, _ := r.Capacity(l.Node.ID, r.InFlight()); load > c {
			t.Fatalf("step %d: %s holds %d, capacity %d", step, l.Node.ID, load, c)
		}
	}
	for _, l := range held {
		l.Release()
	}
}

// TestRemovedNodeLeases: a lease on a node removed meanwhile is released
// into that node's old counter, never into a survivor's or into a node
// re-added under the same ID.
func TestRemovedNodeLeases(t *testing.T) {
	r, _ := New(mkNodes(3), Config{})
	l, _ := r.Acquire("k")
	if err := r.Remove(l.Node.ID); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(kolco.Node{ID: l.Node.ID}); err != nil {
		t.Fatal(err)
	}
	if got := r.Loads()[l.Node.ID]; got != 0 {
		t.Errorf("re-added node starts with load %d, want 0", got)
	}
	if r.InFlight() != 1 {
		t.Errorf("in flight %d, want 1", r.InFlight())
	}
	l.Release()
	if r.InFlight() != 0 {
		t.Errorf("in flight %d after release, want 0", r.InFlight())
	}
	for id, v := range r.Loads() {
		if v != 0 {
			t.Errorf("%s: load %d after release", id, v)
		}
	}
}
