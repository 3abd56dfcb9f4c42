package anchor

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
)

func mkNodes(n int) []kolco.Node {
	out := make([]kolco.Node, n)
	for i := range out {
		out[i] = kolco.Node{ID: fmt.Sprintf("node-%04d", i)}
	}
	return out
}

// refAnchor is AnchorHash in its plain form (the paper's Algorithm 1 with
// explicit sets): every removed bucket b keeps a copy of the working list
// W_b just after its removal, and a lookup rehashes into that copy until it
// reaches a working bucket. Removal swaps the bucket with the last of W;
// adding revives the most recently removed bucket and restores W as it was
// before that removal.
type refAnchor struct {
	capacity int
	w        []int         // working buckets, in order
	snap     map[int][]int // W_b for each removed b
	before   map[int][]int // W just before b's removal
	stack    []int
	owner    map[int]string // bucket -> node ID
}

func newRef(ids []string, capacity int) *refAnchor {
	r := &refAnchor{capacity: capacity, snap: map[int][]int{}, before: map[int][]int{}, owner: map[int]string{}}
	for b := range capacity {
		r.w = append(r.w, b)
	}
	for b := capacity - 1; b >= len(ids); b-- {
		r.removeBucket(b)
	}
	for i, id := range ids { // ids sorted
		r.owner[i] = id
	}
	return r
}

func (r *refAnchor) removeBucket(b int) {
	r.before[b] = slices.Clone(r.w)
	i := slices.Index(r.w, b)
	r.w[i] = r.w[len(r.w)-1]
	r.w = r.w[:len(r.w)-1]
	r.snap[b] = slices.Clone(r.w)
	r.stack = append(r.stack, b)
}

func (r *refAnchor) remove(id string) {
	for b, o := range r.owner {
		if o == id {
			r.removeBucket(b)
			delete(r.owner, b)
			return
		}
	}
}

func (r *refAnchor) add(id string) {
	b := r.stack[len(r.stack)-1]
	r.stack = r.stack[:len(r.stack)-1]
	r.w = r.before[b]
	delete(r.snap, b)
	r.owner[b] = id
}

// refMix and refReduce restate the package's documented hashing.
func refMix(h, i uint64) uint64 {
	z := h ^ (i+1)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func refReduce(x uint64, n int) int {
	hi, _ := bits.Mul64(x, uint64(n))
	return int(hi)
}

func (r *refAnchor) locate(key string) string {
	h := keyhash.XXH3(key)
	b := refReduce(h, r.capacity)
	for {
		wb, removed := r.snap[b]
		if !removed {
			return r.owner[b]
		}
		b = wb[refReduce(refMix(h, uint64(b)), len(wb))]
	}
}

func TestMatchesReferenceUnderChurn(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 6 {
		capacity := []int{16, 40, 100}[trial%3]
		nodes := mkNodes(capacity / 2)
		h, err := New(nodes, Config{Capacity: capacity})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, n := range nodes {
			ids = append(ids, n.ID)
		}
		ref := newRef(ids, capacity)
		in := map[string]bool{}
		for _, id := range ids {
			in[id] = true
		}
		for step := range 60 {
			id := fmt.Sprintf("node-%04d", rng.IntN(capacity+capacity/2))
			switch {
			case in[id] && len(in) > 1:
				if err := h.Remove(id); err != nil {
					t.Fatal(err)
				}
				ref.remove(id)
				delete(in, id)
			case !in[id] && len(in) < capacity:
				if err := h.Add(kolco.Node{ID: id}); err != nil {
					t.Fatal(err)
				}
				ref.add(id)
				in[id] = true
			}
			for k := range 300 {
				key := fmt.Sprint("key-", k)
				got, err := h.Locate(key)
				if err != nil || got.ID != ref.locate(key) {
					t.Fatalf("trial %d step %d: Locate(%q) = %s, %v; reference %s", trial, step, key, got.ID, err, ref.locate(key))
				}
			}
		}
	}
}

func TestRemoveThenAddRestores(t *testing.T) {
	h, _ := New(mkNodes(10), Config{})
	keys := make([]string, 2000)
	for i := range keys {
		keys[i] = fmt.Sprint("k", i)
	}
	before := owners(t, h, keys)
	_ = h.Remove("node-0003")
	_ = h.Remove("node-0007")
	_ = h.Add(kolco.Node{ID: "node-0007"})
	_ = h.Add(kolco.Node{ID: "node-0003"})
	if !slices.Equal(before, owners(t, h, keys)) {
		t.Error("undoing removals in reverse order did not restore the placement")
	}
}

// TestHistoryDependent documents that placement depends on history: the
// same node set reached by different changes can place keys differently.
func TestHistoryDependent(t *testing.T) {
	keys := make([]string, 2000)
	for i := range keys {
		keys[i] = fmt.Sprint("k", i)
	}
	nodes := mkNodes(4)
	a, _ := New(nodes[:3], Config{Capacity: 8})
	_ = a.Add(nodes[3])
	b, _ := New(nodes, Config{Capacity: 8})
	_ = b.Remove("node-0001")
	_ = b.Add(kolco.Node{ID: "node-0001"})
	if !slices.Equal(owners(t, a, keys), owners(t, b, keys)) {
		t.Fatal("node-0001 removed and re-added at once should regain its bucket")
	}
	c, _ := New(nodes, Config{Capacity: 8})
	_ = c.Remove("node-0001")
	_ = c.Remove("node-0002")
	_ = c.Add(kolco.Node{ID: "node-0001"}) // revives node-0002's bucket
	_ = c.Add(kolco.Node{ID: "node-0002"})
	if slices.Equal(owners(t, a, keys), owners(t, c, keys)) {
		t.Error("re-adding in the removal order gave the same placement; the documentation says it differs")
	}
}

func owners(t *testing.T, h *Placement, keys []string) []string {
	t.Helper()
	out := make([]string, len(keys))
	for i, k := range keys {
		n, err := h.Locate(k)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = n.ID
	}
	return out
}

func TestCapacity(t *testing.T) {
	if _, err := New(mkNodes(5), Config{Capacity: 4}); !errors.Is(err, ErrCapacity) || !errors.Is(err, kolco.ErrBadConfig) {
		t.Errorf("5 nodes in 4 buckets: %v", err)
	}
	for _, c := range []int{-1, MaxCapacity + 1} {
		if _, err := New(nil, Config{Capacity: c}); !errors.Is(err, kolco.ErrBadConfig) {
			t.Errorf("capacity %d: %v", c, err)
		}
	}
	h, _ := New(mkNodes(3), Config{Capacity: 4})
	if err := h.Add(kolco.Node{ID: "a"}, kolco.Node{ID: "b"}); !errors.Is(err, ErrCapacity) {
		t.Errorf("adding 2 to 3 of 4: %v", err)
	}
	if len(h.Nodes()) != 3 {
		t.Error("a failed Add changed the node set")
	}
	if err := h.Add(kolco.Node{ID: "a"}); err != nil {
		t.Errorf("adding the fourth: %v", err)
	}
	if d, _ := New(mkNodes(20), Config{}); d.Capacity() != 40 {
		t.Errorf("default capacity for 20 nodes = %d, want 40", d.Capacity())
	}
	if d, _ := New(nil, Config{}); d.Capacity() != MinCapacity {
		t.Errorf("default capacity for no nodes = %d, want %d", d.Capacity(), MinCapacity)
	}
}

func TestErrors(t *testing.T) {
	h, _ := New(mkNodes(3), Config{})
	for _, c := range []struct {
		err, want error
	}{
		{h.Add(kolco.Node{ID: "x", Weight: 2}), kolco.ErrBadWeight},
		{h.Add(kolco.Node{ID: "node-0000"}), kolco.ErrDuplicateNode},
		{h.Remove("nope"), kolco.ErrUnknownNode},
		{h.Remove("node-0000", "node-0000"), kolco.ErrUnknownNode},
		{h.Reweight("node-0000", 2), kolco.ErrBadWeight},
		{h.Reweight("nope", 1), kolco.ErrUnknownNode},
	} {
		if !errors.Is(c.err, c.want) {
			t.Errorf("error %v, want %v", c.err, c.want)
		}
	}
	if err := h.Reweight("node-0000", 1); err != nil {
		t.Errorf("Reweight to 1: %v", err)
	}
	if _, err := New([]kolco.Node{{ID: "a", Weight: 1}, {ID: "b", Weight: 0.5}}, Config{}); !errors.Is(err, kolco.ErrBadWeight) {
		t.Errorf("New with weight 0.5: %v", err)
	}
}

func TestLocateN(t *testing.T) {
	h, _ := New(mkNodes(5), Config{Capacity: 64})
	for i := range 300 {
		key := fmt.Sprint(i)
		first, _ := h.Locate(key)
		got, err := h.LocateN(nil, key, 9)
		if err != nil || len(got) != 5 || got[0].ID != first.ID {
			t.Fatalf("LocateN(%q, 9) = %v, %v", key, got, err)
		}
		for j := range got {
			if slices.ContainsFunc(got[:j], func(n kolco.Node) bool { return n.ID == got[j].ID }) {
				t.Fatalf("LocateN(%q) repeats %s", key, got[j].ID)
			}
		}
		two, _ := h.LocateN(nil, key, 2)
		if !slices.Equal(two, got[:2]) {
			t.Fatalf("LocateN(2) is not a prefix of LocateN(9)")
		}
	}
	if _, err := h.LocateN(nil, "k", 0); !errors.Is(err, kolco.ErrBadCount) {
		t.Errorf("n=0: %v", err)
	}
}

func TestLookupsDoNotAllocate(t *testing.T) {
	h, _ := New(mkNodes(100), Config{})
	_ = h.Remove("node-0010", "node-0050")
	dst := make([]kolco.Node, 0, 8)
	if n := testing.AllocsPerRun(200, func() { _, _ = h.Locate("some-key") }); n != 0 {
		t.Errorf("Locate allocates %v", n)
	}
	if n := testing.AllocsPerRun(200, func() { _, _ = h.LocateN(dst[:0], "some-key", 3) }); n != 0 {
		t.Errorf("LocateN allocates %v", n)
	}
}

// FuzzNew builds anchors of arbitrary capacity and size and looks keys up:
// errors are sentinels, and a built anchor answers with members only.
func FuzzNew(f *testing.F) {
	f.Add(0, 0, "k")
	f.Add(1, 1, "")
	f.Add(3, 5, "x") // more nodes than capacity
	f.Add(-4, 2, "y")
	f.Add(MaxCapacity+1, 1, "z")
	f.Fuzz(func(t *testing.T, capacity, n int, key string) {
		capacity = capacity % (1 << 12)
		nodes := mkNodes(max(0, n%100))
		h, err := New(nodes, Config{Capacity: capacity})
		if err != nil {
			if !errors.Is(err, kolco.ErrBadConfig) {
				t.Fatalf("New(%d nodes, capacity %d): %v", len(nodes), capacity, err)
			}
			return
		}
		got, err := h.LocateN(nil, key, len(nodes)+1)
		if len(nodes) == 0 {
			if !errors.Is(err, kolco.ErrNoNodes) {
				t.Fatalf("LocateN on empty anchor: %v", err)
			}
			return
		}
		if err != nil || len(got) != len(nodes) {
			t.Fatalf("LocateN listed %d of %d nodes: %v", len(got), len(nodes), err)
		}
	})
}
