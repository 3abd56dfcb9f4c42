package ring_test

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/ring"
)

// refRing is the article's ring written the straightforward way: a
// slice of (point, ID) pairs sorted after every change, a binary search for
// the first pair >= (h,), and a wrap to the start.
type refRing struct {
	vnodes int
	hash   keyhash.Func
	pairs  []refPoint
	zone   map[string]string
}

type refPoint struct {
	h     uint64
	id    string
	label string // hashing it as a key lands exactly on the point
}

func (r *refRing) add(id string, weight float64, zone string) {
	count := max(int(math.Round(float64(r.vnodes)*weight)), 1)
	for i := range count {
		label := fmt.Sprintf("%s#%d", id, i)
		r.pairs = append(r.pairs, refPoint{r.hash(label), id, label})
	}
	slices.SortFunc(r.pairs, func(a, b refPoint) int {
		return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.id, b.id))
	})
	r.zone[id] = zone
}

func (r *refRing) remove(id string) {
	r.pairs = slices.DeleteFunc(r.pairs, func(p refPoint) bool { return p.id == id })
	delete(r.zone, id)
}

func (r *refRing) start(key string) int {
	h := r.hash(key)
	i, _ := slices.BinarySearchFunc(r.pairs, h, func(p refPoint, h uint64) int { return cmp.Compare(p.h, h) })
	return i % len(r.pairs)
}

func (r *refRing) get(key string) string { return r.pairs[r.start(key)].id }

// getN is the article's get_nodes, plus a zone-first pass when zoneAware.
func (r *refRing) getN(key string, n int, zoneAware bool) []string {
	start := r.start(key)
	var out []string
	zones := map[string]bool{}
	if zoneAware {
		distinct := map[string]bool{}
		for _, z := range r.zone {
			distinct[z] = true
		}
		for k := 0; k < len(r.pairs) && len(out) < n && len(zones) < len(distinct); k++ {
			id := r.pairs[(start+k)%len(r.pairs)].id
			if !slices.Contains(out, id) && !zones[r.zone[id]] {
				out = append(out, id)
				zones[r.zone[id]] = true
			}
		}
	}
	for k := 0; k < len(r.pairs) && len(out) < n; k++ {
		id := r.pairs[(start+k)%len(r.pairs)].id
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func ids(nodes []kolco.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.ID
	}
	return out
}

// TestDifferentialArticle checks the ring in article mode key for key against the
// reference, for random node sets, weights, vnode counts and removals, for
// one owner and for n owners, with and without zones.
func TestDifferentialArticle(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 12 {
		vnodes := []int{1, 3, 10, 40}[trial%4]
		zoneAware := trial%3 == 0
		hash := []keyhash.Func{keyhash.MD5, keyhash.XXH3, keyhash.CRC32}[trial%3]
		cfg := ring.Config{VNodes: vnodes, Hash: hash, ZoneAware: zoneAware}
		r, err := ring.New(nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		// The ring hashes with the finalized hash: crc32's raw values
		// would crowd into the first 2^32 of the circle.
		ref := &refRing{vnodes: vnodes, hash: keyhash.Finalized(hash), zone: map[string]string{}}
		var live []string
		for step := range 30 {
			if len(live) > 2 && rng.IntN(3) == 0 {
				id := live[rng.IntN(len(live))]
				live = slices.DeleteFunc(live, func(s string) bool { return s == id })
				ref.remove(id)
				if err := r.Remove(id); err != nil {
					t.Fatal(err)
				}
			} else {
				id := fmt.Sprintf("n%d-%d:11211", trial, step)
				w := []float64{1, 2, 0.5, 3}[rng.IntN(4)]
				zone := fmt.Sprintf("z%d", rng.IntN(3))
				live = append(live, id)
				ref.add(id, w, zone)
				if err := r.Add(kolco.Node{ID: id, Weight: w, Zone: zone}); err != nil {
					t.Fatal(err)
				}
			}
			compareRing(t, r, ref, rng, zoneAware, fmt.Sprintf("trial %d step %d", trial, step))
		}
	}
}

func compareRing(t *testing.T, r *ring.Ring, ref *refRing, rng *rand.Rand, zoneAware bool, where string) {
	t.Helper()
	var dst []kolco.Node
	for k := range 400 {
		key := fmt.Sprintf("user:%d", rng.Uint64())
		switch {
		case k == 0:
			key = ""
		case k%4 == 0:
			// A key whose hash equals a point belongs to that point's
			// node: the first point >= the hash, not the first one past it.
			key = ref.pairs[rng.IntN(len(ref.pairs))].label
		}
		got, err := r.Locate(key)
		if err != nil {
			t.Fatal(err)
		}
		if want := ref.get(key); got.ID != want {
			t.Fatalf("%s: Locate(%q) = %s, reference %s", where, key, got.ID, want)
		}
		if id, err := r.LocateID(key); err != nil || id != got.ID {
			t.Fatalf("%s: LocateID(%q) = %q, %v; Locate says %s", where, key, id, err, got.ID)
		}
		n := 1 + rng.IntN(r.Len()+1)
		dst, err = r.LocateN(dst[:0], key, n)
		if err != nil {
			t.Fatal(err)
		}
		if want := ref.getN(key, n, zoneAware); !slices.Equal(ids(dst), want) {
			t.Fatalf("%s: LocateN(%q, %d) = %v, reference %v", where, key, n, ids(dst), want)
		}
	}
}

// TestArticleDemo checks the article's three-node example: with 100
// vnodes and md5, user:42 lives on cache-a, its two replicas on cache-a and
// cache-b, and without cache-a it moves to cache-b.
func TestArticleDemo(t *testing.T) {
	r, err := ring.New([]kolco.Node{{ID: "cache-a"}, {ID: "cache-b"}, {ID: "cache-c"}}, ring.ArticleConfig())
	if err != nil {
		t.Fatal(err)
	}
	ref := &refRing{vnodes: 100, hash: keyhash.MD5, zone: map[string]string{}}
	for _, id := range []string{"cache-a", "cache-b", "cache-c"} {
		ref.add(id, 1, "")
	}
	got, _ := r.Locate("user:42")
	two, _ := r.LocateN(nil, "user:42", 2)
	if got.ID != ref.get("user:42") || !slices.Equal(ids(two), ref.getN("user:42", 2, false)) {
		t.Fatalf("ring and reference disagree on user:42: %s %v", got.ID, ids(two))
	}
	if got.ID != "cache-a" || !slices.Equal(ids(two), []string{"cache-a", "cache-b"}) {
		t.Errorf("user:42 -> %s, replicas %v; the article prints cache-a, [cache-a cache-b]", got.ID, ids(two))
	}
	if err := r.Remove(got.ID); err != nil {
		t.Fatal(err)
	}
	if after, _ := r.Locate("user:42"); after.ID != "cache-b" {
		t.Errorf("after removing %s, user:42 -> %s; the article prints cache-b", got.ID, after.ID)
	}
}

func TestOwnersSortedMatchesLocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	r, err := ring.New(named("node", 17), ring.Config{VNodes: 7})
	if err != nil {
		t.Fatal(err)
	}
	hashes := make([]uint64, 5000)
	for i := range hashes {
		hashes[i] = rng.Uint64()
	}
	hashes = append(hashes, 0, ^uint64(0))
	for i := range 17 { // hashes equal to points, where >= and > differ
		hashes = append(hashes, keyhash.XXH3(fmt.Sprintf("node-%d#%d", i, i%7)))
	}
	slices.Sort(hashes)
	out := make([]int32, len(hashes))
	if err := r.OwnersSorted(hashes, out); err != nil {
		t.Fatal(err)
	}
	nodes := r.Nodes()
	for i, h := range hashes {
		want, _ := r.LocateHash(h)
		if nodes[out[i]].ID != want.ID {
			t.Fatalf("hash %#x: OwnersSorted says %s, LocateHash %s", h, nodes[out[i]].ID, want.ID)
		}
	}
	hashes[0] = ^uint64(0)
	if err := r.OwnersSorted(hashes, out); !errors.Is(err, kolco.ErrBadConfig) {
		t.Errorf("unsorted hashes: %v, want ErrBadConfig", err)
	}
	if err := r.OwnersSorted(hashes, out[:1]); !errors.Is(err, kolco.ErrBadConfig) {
		t.Errorf("short out: %v, want ErrBadConfig", err)
	}
	empty, _ := ring.New(nil, ring.Config{})
	if err := empty.OwnersSorted(hashes, out); !errors.Is(err, kolco.ErrNoNodes) {
		t.Errorf("empty ring: %v, want ErrNoNodes", err)
	}
}

// TestDifferentialWideOwners checks a ring of more nodes than an owner of
// 16 bits can name (its lookups all take the search) against the
// reference, before and after a removal and an addition.
func TestDifferentialWideOwners(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a ring of 65,540 nodes")
	}
	const n = 1<<16 + 4
	nodes := make([]kolco.Node, n)
	ref := &refRing{vnodes: 1, hash: keyhash.XXH3, zone: map[string]string{}}
	for i := range nodes {
		nodes[i] = kolco.Node{ID: fmt.Sprintf("w%d", i)}
		label := nodes[i].ID + "#0"
		ref.pairs = append(ref.pairs, refPoint{keyhash.XXH3(label), nodes[i].ID, label})
	}
	slices.SortFunc(ref.pairs, func(a, b refPoint) int { return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.id, b.id)) })
	r, err := ring.New(nodes, ring.Config{VNodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(what string) {
		for range 2000 {
			key := fmt.Sprintf("user:%d", rng.Uint64())
			if got, err := r.LocateID(key); err != nil || got != ref.get(key) {
				t.Fatalf("%s: LocateID(%q) = %q, %v; want %q", what, key, got, err, ref.get(key))
			}
		}
		for _, p := range ref.pairs[:200] {
			if got, _ := r.LocateID(p.label); got != p.id {
				t.Fatalf("%s: LocateID(%q) on a point = %q, want %q", what, p.label, got, p.id)
			}
		}
	}
	check("built")
	if err := r.Remove("w7", "w65000"); err != nil {
		t.Fatal(err)
	}
	ref.remove("w7")
	ref.remove("w65000")
	check("after removals")
	if err := r.Add(kolco.Node{ID: "extra", Weight: 3}); err != nil {
		t.Fatal(err)
	}
	ref.add("extra", 3, "")
	check("after an addition")
}
