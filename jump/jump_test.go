package jump_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/jump"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/kolcotest"
)

func algorithm() kolcotest.Algorithm {
	return kolcotest.Algorithm{
		Name: "jump",
		New:  func(nodes []kolco.Node) (kolco.Placement, error) { return jump.New(nodes, jump.Config{}) },
		Restore: func(nodes []kolco.Node, state []byte) (kolco.Placement, error) {
			return jump.Restore(nodes, jump.Config{}, state)
		},
		MinimalAdd:    true,
		MinimalRemove: true,
		Undo:          true,
		Balance:       func(int) float64 { return 1 },
		NewHashed: func(nodes []kolco.Node, h keyhash.Func) (kolco.Placement, error) {
			return jump.New(nodes, jump.Config{Hash: h})
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

func TestWeightsRejected(t *testing.T) {
	_, err := jump.New([]kolco.Node{{ID: "a", Weight: 2}}, jump.Config{})
	if !errors.Is(err, kolco.ErrBadWeight) {
		t.Fatalf("New with weight 2: %v", err)
	}
	j, _ := jump.New([]kolco.Node{{ID: "a", Weight: 1}, {ID: "b"}}, jump.Config{})
	if err := j.Add(kolco.Node{ID: "c", Weight: 0.5}); !errors.Is(err, kolco.ErrBadWeight) {
		t.Fatalf("Add with weight 0.5: %v", err)
	}
	if err := j.Reweight("a", 3); !errors.Is(err, kolco.ErrBadWeight) {
		t.Fatalf("Reweight 3: %v", err)
	}
	if err := j.Reweight("a", 1); err != nil {
		t.Fatalf("Reweight 1: %v", err)
	}
}

// TestNoRemovalIsJump checks that without removals the owner of a key is
// the node on bucket jump.Bucket(hash(key), N), buckets in ID order.
func TestNoRemovalIsJump(t *testing.T) {
	nodes := kolcotest.Nodes(37) // IDs node-0, node-1, node-10, ... in ID order
	j, _ := jump.New(nodes, jump.Config{})
	sorted := j.Nodes()
	for _, k := range kolcotest.Keys(3000) {
		got, _ := j.Locate(k)
		if want := sorted[jump.Bucket(keyhash.XXH3(k), len(sorted))]; got.ID != want.ID {
			t.Fatalf("Locate(%q) = %s, want %s", k, got.ID, want.ID)
		}
	}
}

// TestReplicasAreFailover checks the documented replica rule: replica i+1
// is the owner once replicas 1..i are removed in order, both while no
// bucket is removed (owners on the last bucket then go by shrinking the
// array) and after some history (they go to the replacement table).
func TestReplicasAreFailover(t *testing.T) {
	nodes := kolcotest.Nodes(12)
	for _, history := range [][]string{nil, {"node-3", "node-7"}} {
		base, _ := jump.New(nodes, jump.Config{})
		_ = base.Remove(history...)
		for _, k := range kolcotest.Keys(300) {
			reps, err := base.LocateN(nil, k, 10)
			if err != nil {
				t.Fatal(err)
			}
			j, _ := jump.New(nodes, jump.Config{})
			_ = j.Remove(history...)
			for i, r := range reps {
				owner, err := j.Locate(k)
				if err != nil || owner.ID != r.ID {
					t.Fatalf("history %v, key %q: replica %d is %s, owner after removing the first %d is %s (%v)", history, k, i, r.ID, i, owner.ID, err)
				}
				if err := j.Remove(r.ID); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// TestBalanceAfterRemovals checks that MementoHash spreads removed nodes'
// keys evenly: after removing 40 of 100 nodes at random, the busiest of the
// 60 left holds at most 1.3 times the mean (sampling allowance included).
func TestBalanceAfterRemovals(t *testing.T) {
	nodes := kolcotest.Nodes(100)
	j, _ := jump.New(nodes, jump.Config{})
	r := rand.New(rand.NewPCG(5, 6))
	for _, i := range r.Perm(100)[:40] {
		if err := j.Remove(nodes[i].ID); err != nil {
			t.Fatal(err)
		}
	}
	load := map[string]int{}
	keys := kolcotest.Keys(60 * 1000)
	for _, k := range keys {
		n, _ := j.Locate(k)
		load[n.ID]++
	}
	hi := 0
	for _, c := range load {
		hi = max(hi, c)
	}
	ratio := float64(hi) / 1000
	t.Logf("60 of 100 nodes left: max/avg %.3f over %d nodes", ratio, len(load))
	if len(load) != 60 || ratio > 1.3 {
		t.Errorf("%d nodes hold keys, max/avg %.3f", len(load), ratio)
	}
}

// TestPinned pins the placement of 1000 keys on 10 nodes (after a few
// changes for history-dependent placements). The value is the package's
// own output, recorded when the package was written: it changes only if
// placement changes, which breaks every deployed cluster.
func TestPinned(t *testing.T) {
	p, err := jump.New(kolcotest.Nodes(10), jump.Config{})
	if err != nil {
		t.Fatal(err)
	}
	_ = p.Remove("node-2", "node-9")
	_ = p.Add(kolco.Node{ID: "node-x"})
	got, err := kolcotest.Fingerprint(p, 1000)
	if err != nil {
		t.Fatal(err)
	}
	const want = 0x88212536446a6d3e
	if got != want {
		t.Errorf("fingerprint %#x, pinned %#x", got, uint64(want))
	}
}

// TestHistory checks the two documented consequences of tying nodes to
// buckets: removing a node and adding it back restores every key, while
// the same final set reached another way may place keys differently.
func TestHistory(t *testing.T) {
	nodes := kolcotest.Nodes(8)
	keys := kolcotest.Keys(2000)
	owners := func(j *jump.Placement) []string {
		out := make([]string, len(keys))
		for i, k := range keys {
			n, _ := j.Locate(k)
			out[i] = n.ID
		}
		return out
	}
	j, _ := jump.New(nodes, jump.Config{})
	want := owners(j)
	_ = j.Remove("node-3")
	_ = j.Add(nodes[3])
	if got := owners(j); !slices.Equal(got, want) {
		t.Fatal("remove then re-add did not restore the placement")
	}

	// node-3 leaves and node-x joins: node-x takes node-3's bucket. A
	// fresh build of the same set puts node-x on the last bucket.
	_ = j.Remove("node-3")
	_ = j.Add(kolco.Node{ID: "node-x"})
	fresh, _ := jump.New(append(slices.Clone(nodes[:3]), append(slices.Clone(nodes[4:]), kolco.Node{ID: "node-x"})...), jump.Config{})
	if slices.Equal(owners(j), owners(fresh)) {
		t.Fatal("history made no difference; the doc says it can")
	}
	if total, working := j.Buckets(); total != 8 || working != 8 {
		t.Fatalf("Buckets() = %d, %d; want 8, 8", total, working)
	}
}

func BenchmarkJump(b *testing.B) { kolcotest.Benchmark(b, algorithm()) }
