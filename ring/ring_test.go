package ring_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/ring"
)

func named(prefix string, n int) []kolco.Node {
	nodes := make([]kolco.Node, n)
	for i := range nodes {
		nodes[i] = kolco.Node{ID: fmt.Sprintf("%s-%d", prefix, i)}
	}
	return nodes
}

func mustNew(t testing.TB, nodes []kolco.Node, cfg ring.Config) *ring.Ring {
	t.Helper()
	r, err := ring.New(nodes, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var testKeys = func() []string {
	keys := make([]string, 20000)
	for i := range keys {
		keys[i] = "user:" + strconv.Itoa(i)
	}
	return keys
}()

func owners(t testing.TB, r *ring.Ring) []string {
	t.Helper()
	out := make([]string, len(testKeys))
	for i, k := range testKeys {
		n, err := r.Locate(k)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = n.ID
	}
	return out
}

func TestAddMovesKeysOnlyOntoNewNode(t *testing.T) {
	for _, v := range []int{1, 10, 160} {
		r := mustNew(t, named("node", 10), ring.Config{VNodes: v})
		before := owners(t, r)
		if err := r.Add(kolco.Node{ID: "node-10"}); err != nil {
			t.Fatal(err)
		}
		after := owners(t, r)
		moved := 0
		for i := range before {
			if before[i] != after[i] {
				moved++
				if after[i] != "node-10" {
					t.Fatalf("V=%d: %s moved %s -> %s, not onto the new node", v, testKeys[i], before[i], after[i])
				}
			}
		}
		if moved == 0 {
			t.Errorf("V=%d: no key moved onto the new node", v)
		}
	}
}

func TestRemoveMovesOnlyItsKeysAndReAddRestores(t *testing.T) {
	r := mustNew(t, named("node", 10), ring.Config{VNodes: 50})
	before := owners(t, r)
	if err := r.Remove("node-3", "node-7"); err != nil {
		t.Fatal(err)
	}
	mid := owners(t, r)
	for i := range before {
		if before[i] != mid[i] && before[i] != "node-3" && before[i] != "node-7" {
			t.Fatalf("%s moved %s -> %s though its node stayed", testKeys[i], before[i], mid[i])
		}
		if mid[i] == "node-3" || mid[i] == "node-7" {
			t.Fatalf("%s still on removed node %s", testKeys[i], mid[i])
		}
	}
	if err := r.Add(kolco.Node{ID: "node-7"}, kolco.Node{ID: "node-3"}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, owners(t, r)) {
		t.Error("re-adding the removed nodes did not restore the original placement")
	}
}

func TestInsertionOrderNeverMatters(t *testing.T) {
	nodes := named("n", 30)
	// Equal points must be ordered by ID too. Real hashes almost never
	// collide, so the second configuration keeps only 4 bits of crc32:
	// points (and keys) fall on 16 values, and most points tie.
	tie := func(s string) uint64 { return keyhash.CRC32(s) & 0xF000 }
	for _, cfg := range []ring.Config{{VNodes: 20}, {VNodes: 20, Hash: tie}} {
		want := owners(t, mustNew(t, nodes, cfg))
		rng := rand.New(rand.NewPCG(7, 7))
		for range 5 {
			shuffled := slices.Clone(nodes)
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			r := mustNew(t, nil, cfg)
			for len(shuffled) > 0 { // add in random batches
				k := 1 + rng.IntN(len(shuffled))
				if err := r.Add(shuffled[:k]...); err != nil {
					t.Fatal(err)
				}
				shuffled = shuffled[k:]
			}
			if !slices.Equal(want, owners(t, r)) {
				t.Fatal("the same node set added in another order places keys differently")
			}
		}
	}
}

func TestReweightMovesOnlyToOrFromTheNode(t *testing.T) {
	r := mustNew(t, named("node", 8), ring.Config{VNodes: 40})
	before := owners(t, r)
	if err := r.Reweight("node-2", 3); err != nil {
		t.Fatal(err)
	}
	up := owners(t, r)
	for i := range before {
		if before[i] != up[i] && up[i] != "node-2" {
			t.Fatalf("raising node-2's weight moved %s %s -> %s", testKeys[i], before[i], up[i])
		}
	}
	if err := r.Reweight("node-2", 1); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, owners(t, r)) {
		t.Error("restoring the weight did not restore the placement")
	}
}

func TestLocateNDistinctAndPrefixStable(t *testing.T) {
	nodes := named("node", 12)
	for i := range nodes {
		nodes[i].Zone = "z" + strconv.Itoa(i%4)
	}
	for _, zoneAware := range []bool{false, true} {
		r := mustNew(t, nodes, ring.Config{VNodes: 30, ZoneAware: zoneAware})
		var prev, cur []kolco.Node
		for _, key := range testKeys[:500] {
			prev = prev[:0]
			for n := 1; n <= len(nodes)+2; n++ {
				var err error
				cur, err = r.LocateN(cur[:0], key, n)
				if err != nil {
					t.Fatal(err)
				}
				if want := min(n, len(nodes)); len(cur) != want {
					t.Fatalf("LocateN(%q, %d) returned %d nodes, want %d", key, n, len(cur), want)
				}
				if !slices.Equal(ids(cur[:len(prev)]), ids(prev)) {
					t.Fatalf("LocateN(%q, %d) = %v is not an extension of n-1's %v", key, n, ids(cur), ids(prev))
				}
				if len(distinct(ids(cur))) != len(cur) {
					t.Fatalf("LocateN(%q, %d) repeats a node: %v", key, n, ids(cur))
				}
				if zoneAware {
					zones := map[string]bool{}
					for _, c := range cur {
						zones[c.Zone] = true
					}
					if want := min(n, 4); len(zones) < want {
						t.Fatalf("zone-aware LocateN(%q, %d) covers %d zones, want %d", key, n, len(zones), want)
					}
				}
				prev = append(prev[:0], cur...)
			}
			first, _ := r.Locate(key)
			if prev[0].ID != first.ID {
				t.Fatalf("LocateN(%q)[0] = %s but Locate = %s", key, prev[0].ID, first.ID)
			}
		}
	}
}

func distinct(s []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range s {
		m[x] = true
	}
	return m
}

func TestErrors(t *testing.T) {
	empty := mustNew(t, nil, ring.Config{})
	if _, err := empty.Locate("k"); !errors.Is(err, kolco.ErrNoNodes) {
		t.Errorf("Locate on empty ring: %v, want ErrNoNodes", err)
	}
	if _, err := empty.LocateN(nil, "k", 2); !errors.Is(err, kolco.ErrNoNodes) {
		t.Errorf("LocateN on empty ring: %v, want ErrNoNodes", err)
	}
	r := mustNew(t, named("node", 3), ring.Config{})
	before := owners(t, r)
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"duplicate", r.Add(kolco.Node{ID: "node-1"}), kolco.ErrDuplicateNode},
		{"duplicate within one call", r.Add(kolco.Node{ID: "x"}, kolco.Node{ID: "x"}), kolco.ErrDuplicateNode},
		{"empty ID", r.Add(kolco.Node{ID: ""}), kolco.ErrBadNodeID},
		{"negative weight", r.Add(kolco.Node{ID: "y", Weight: -1}), kolco.ErrBadWeight},
		{"NaN weight", r.Add(kolco.Node{ID: "y", Weight: nan}), kolco.ErrBadWeight},
		{"infinite weight", r.Add(kolco.Node{ID: "y", Weight: inf}), kolco.ErrBadWeight},
		{"huge weight", r.Add(kolco.Node{ID: "y", Weight: 1e12}), kolco.ErrBadConfig},
		{"unknown remove", r.Remove("node-0", "nope"), kolco.ErrUnknownNode},
		{"remove listed twice", r.Remove("node-0", "node-0"), kolco.ErrUnknownNode},
		{"unknown reweight", r.Reweight("nope", 2), kolco.ErrUnknownNode},
		{"zero reweight", r.Reweight("node-0", 0), kolco.ErrBadWeight},
		{"negative reweight", r.Reweight("node-0", -2), kolco.ErrBadWeight},
	} {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: error %v, want %v", c.name, c.err, c.want)
		}
	}
	if r.Len() != 3 || !slices.Equal(before, owners(t, r)) {
		t.Error("a failed change altered the ring")
	}
	if _, err := r.LocateN(nil, "k", 0); !errors.Is(err, kolco.ErrBadCount) {
		t.Errorf("LocateN n=0: %v, want ErrBadCount", err)
	}
	if _, err := ring.New(nil, ring.Config{VNodes: -1}); !errors.Is(err, kolco.ErrBadConfig) {
		t.Errorf("New vnodes=-1: %v, want ErrBadConfig", err)
	}
}

func TestWeightsHonoured(t *testing.T) {
	r := mustNew(t, []kolco.Node{{ID: "a"}, {ID: "b", Weight: 2}, {ID: "c", Weight: 0.5}}, ring.Config{VNodes: 1000})
	load := map[string]int{}
	for _, id := range owners(t, r) {
		load[id]++
	}
	for id, want := range map[string]float64{"a": 1 / 3.5, "b": 2 / 3.5, "c": 0.5 / 3.5} {
		got := float64(load[id]) / float64(len(testKeys))
		if math.Abs(got-want)/want > 0.1 {
			t.Errorf("node %s share %.3f, want %.3f within 10%%", id, got, want)
		}
	}
}

func TestLookupsDoNotAllocate(t *testing.T) {
	for _, size := range []int{10, 3000} { // 3000 nodes exceeds the walk's bitset
		r := mustNew(t, named("node", size), ring.Config{VNodes: 10})
		dst := make([]kolco.Node, 0, 8)
		key := "user:12345"
		if n := testing.AllocsPerRun(200, func() { sinkNode, _ = r.Locate(key) }); n != 0 {
			t.Errorf("%d nodes: Locate allocates %v times", size, n)
		}
		if n := testing.AllocsPerRun(200, func() { dst, _ = r.LocateN(dst[:0], key, 5) }); n != 0 {
			t.Errorf("%d nodes: LocateN allocates %v times", size, n)
		}
	}
}

var sinkNode *kolco.Node

var sinkID string
