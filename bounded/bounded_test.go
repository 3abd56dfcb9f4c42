package bounded

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
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

func mkKeys(n int, prefix string) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = prefix + strconv.Itoa(i)
	}
	return keys
}

// refRing is the bounded-loads allocation written plainly: every point
// "ID#i" listed with its owner's ID, sorted, and searched linearly.
type refRing struct {
	at  []uint64
	ids []string
	cap map[string]int
}

func newRefRing(nodes []kolco.Node, points int, eps float64, keys int) *refRing {
	type pt struct {
		at uint64
		id string
	}
	var pts []pt
	wsum := 0.0
	for _, nd := range nodes {
		wsum += nd.EffectiveWeight()
		c := max(1, int(math.Round(nd.EffectiveWeight()*float64(points))))
		for i := range c {
			pts = append(pts, pt{keyhash.XXH3(nd.ID + "#" + strconv.Itoa(i)), nd.ID})
		}
	}
	slices.SortFunc(pts, func(a, b pt) int {
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	r := &refRing{cap: map[string]int{}}
	for _, p := range pts {
		r.at = append(r.at, p.at)
		r.ids = append(r.ids, p.id)
	}
	for _, nd := range nodes {
		r.cap[nd.ID] = int(math.Ceil((1 + eps) * float64(keys) * nd.EffectiveWeight() / wsum))
	}
	return r
}

// first returns the index of the first point at or after h, wrapping.
func (r *refRing) first(h uint64) int {
	for i, a := range r.at {
		if a >= h {
			return i
		}
	}
	return 0
}

func (r *refRing) assign(keys []string) []string {
	load := map[string]int{}
	var out []string
	for _, k := range keys {
		for i := r.first(keyhash.XXH3(k)); ; i = (i + 1) % len(r.at) {
			if id := r.ids[i]; load[id] < r.cap[id] {
				load[id]++
				out = append(out, id)
				break
			}
		}
	}
	return out
}

func TestAssignMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 12 {
		nodes := mkNodes(1 + rng.IntN(12))
		for i := range nodes {
			nodes[i].Weight = []float64{0, 1, 2, 0.5, 3}[rng.IntN(5)]
		}
		eps := []float64{0.01, 0.1, 0.25, 1}[trial%4]
		r, err := New(nodes, Config{Epsilon: eps, VNodes: 8})
		if err != nil {
			t.Fatal(err)
		}
		keys := mkKeys(200+rng.IntN(800), fmt.Sprint("t", trial, "-"))
		got, err := r.Assign(keys)
		if err != nil {
			t.Fatal(err)
		}
		ref := newRefRing(nodes, 8, eps, len(keys))
		want := ref.assign(keys)
		for i := range keys {
			if id := got.Nodes[got.Owner[i]].ID; id != want[i] {
				t.Fatalf("trial %d: key %q on %s, reference %s", trial, keys[i], id, want[i])
			}
		}
		for _, k := range keys[:50] {
			if nd, _ := r.Locate(k); nd.ID != ref.ids[ref.first(keyhash.XXH3(k))] {
				t.Fatalf("trial %d: Locate(%q) = %s, reference %s", trial, k, nd.ID, ref.ids[ref.first(keyhash.XXH3(k))])
			}
		}
	}
}

func TestAssignWithinCapacity(t *testing.T) {
	for _, eps := range []float64{0.001, 0.05, 0.25, 2} {
		for _, n := range []int{1, 3, 10, 100} {
			r, _ := New(mkNodes(n), Config{Epsilon: eps})
			a, err := r.Assign(mkKeys(5000, "k"))
			if err != nil {
				t.Fatal(err)
			}
			want := int(math.Ceil((1 + eps) * 5000 / float64(n)))
			sum := 0
			for j := range a.Nodes {
				sum += a.Load[j]
				if a.Capacity[j] != want || a.Load[j] > a.Capacity[j] {
					t.Fatalf("eps %v, %d nodes: node %d load %d, capacity %d (want %d)", eps, n, j, a.Load[j], a.Capacity[j], want)
				}
			}
			if sum != 5000 {
				t.Fatalf("assigned %d of 5000 keys", sum)
			}
		}
	}
	empty, _ := New(nil, Config{})
	if _, err := empty.Assign([]string{"k"}); !errors.Is(err, kolco.ErrNoNodes) {
		t.Errorf("Assign on empty ring: %v", err)
	}
	if a, err := empty.Assign(nil); err != nil || len(a.Owner) != 0 {
		t.Errorf("Assign(nil) on empty ring: %v", err)
	}
}

func TestBadConfig(t *testing.T) {
	for _, eps := range []float64{-0.1, math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := New(mkNodes(2), Config{Epsilon: eps})
		if !errors.Is(err, ErrBadEpsilon) || !errors.Is(err, kolco.ErrBadConfig) {
			t.Errorf("epsilon %v: error %v, want ErrBadEpsilon", eps, err)
		}
	}
	if _, err := New(mkNodes(2), Config{VNodes: -1}); !errors.Is(err, kolco.ErrBadConfig) {
		t.Errorf("VNodes -1: %v", err)
	}
	if _, err := New([]kolco.Node{{ID: "huge", Weight: 1e12}}, Config{}); !errors.Is(err, kolco.ErrBadConfig) {
		t.Errorf("weight 1e12: %v", err)
	}
	r, _ := New(mkNodes(2), Config{})
	if r.Epsilon() != DefaultEpsilon {
		t.Errorf("default epsilon %v", r.Epsilon())
	}
}

func TestErrors(t *testing.T) {
	r, _ := New(mkNodes(3), Config{})
	for _, c := range []struct{ err, want error }{
		{r.Add(kolco.Node{ID: "node-0000"}), kolco.ErrDuplicateNode},
		{r.Add(kolco.Node{ID: ""}), kolco.ErrBadNodeID},
		{r.Remove("nope"), kolco.ErrUnknownNode},
		{r.Reweight("node-0000", 0), kolco.ErrBadWeight},
		{r.Reweight("nope", 1), kolco.ErrUnknownNode},
	} {
		if !errors.Is(c.err, c.want) {
			t.Errorf("error %v, want %v", c.err, c.want)
		}
	}
	if _, err := r.Capacity("nope", 10); !errors.Is(err, kolco.ErrUnknownNode) {
		t.Errorf("Capacity(nope): %v", err)
	}
	empty, _ := New(nil, Config{})
	if _, err := empty.Acquire("k"); !errors.Is(err, kolco.ErrNoNodes) {
		t.Errorf("Acquire on empty ring: %v", err)
	}
	Lease{}.Release() // the zero lease is harmless
}

func TestLookupsDoNotAllocate(t *testing.T) {
	r, _ := New(mkNodes(100), Config{})
	dst := make([]kolco.Node, 0, 8)
	if n := testing.AllocsPerRun(200, func() { _, _ = r.Locate("some-key") }); n != 0 {
		t.Errorf("Locate allocates %v", n)
	}
	if n := testing.AllocsPerRun(200, func() { _, _ = r.LocateN(dst[:0], "some-key", 3) }); n != 0 {
		t.Errorf("LocateN allocates %v", n)
	}
	if n := testing.AllocsPerRun(200, func() {
		l, _ := r.Acquire("some-key")
		l.Release()
	}); n != 0 {
		t.Errorf("Acquire+Release allocates %v", n)
	}
}

func TestConcurrentAcquireAndChanges(t *testing.T) {
	r, _ := New(mkNodes(6), Config{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var held []Lease
			for i := range 3000 {
				l, err := r.Acquire(fmt.Sprint(g, i%50))
				if err != nil {
					t.Error(err)
					return
				}
				held = append(held, l)
				if len(held) > 20 {
					held[0].Release()
					held = held[1:]
				}
			}
			for _, l := range held {
				l.Release()
			}
		}()
	}
	for i := range 50 {
		id := fmt.Sprintf("extra-%d", i)
		if err := r.Add(kolco.Node{ID: id}); err != nil {
			t.Fatal(err)
		}
		if err := r.Remove(id); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if n := r.InFlight(); n != 0 {
		t.Errorf("%d requests in flight after every lease was released", n)
	}
	for id, l := range r.Loads() {
		if l != 0 {
			t.Errorf("%s: load %d after every lease was released", id, l)
		}
	}
}
