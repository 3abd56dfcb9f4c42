package jump_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/jump"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/kolcotest"
)

// refMemento is MementoHash as the paper's pseudocode and its authors'
// reference implementation (MementoEngine in
// github.com/SUPSI-DTI-ISIN/java-consistent-hashing-algorithms) read, with a
// map as the replacement set: the last bucket, while none is removed, goes
// by shrinking the array.
type refMemento struct {
	n       int
	removed map[int][2]int // bucket -> {replacer, previous removed}
	last    int
	owner   map[int]string
	bucket  map[string]int
}

func newRef(ids []string) *refMemento {
	ids = slices.Sorted(slices.Values(ids))
	m := &refMemento{n: len(ids), removed: map[int][2]int{}, last: len(ids), owner: map[int]string{}, bucket: map[string]int{}}
	for b, id := range ids {
		m.owner[b], m.bucket[id] = id, b
	}
	return m
}

func (m *refMemento) add(id string) {
	b := m.last
	if e, ok := m.removed[b]; ok {
		m.last = e[1]
		delete(m.removed, b)
	} else {
		m.n++
		m.last = m.n
	}
	m.owner[b], m.bucket[id] = id, b
}

func (m *refMemento) remove(id string) {
	b := m.bucket[id]
	defer func() { delete(m.bucket, id); delete(m.owner, b) }()
	if len(m.removed) == 0 && b == m.n-1 {
		m.n--
		m.last = m.n
		return
	}
	working := m.n - len(m.removed)
	m.removed[b] = [2]int{working - 1, m.last}
	m.last = b
}

func (m *refMemento) replacer(b int) int {
	if e, ok := m.removed[b]; ok {
		return e[0]
	}
	return -1
}

// second is the re-hash of a key landing on removed bucket b: fmix64 of
// the key hash xor (b+1) times the golden ratio constant.
func second(kh uint64, b int) uint64 {
	x := kh ^ (uint64(b)+1)*0x9e3779b97f4a7c15
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

func (m *refMemento) locate(key string) string {
	kh := keyhash.XXH3(key)
	b := jump.Bucket(kh, m.n)
	r := m.replacer(b)
	for r >= 0 {
		b = int(second(kh, b) % uint64(r))
		next := m.replacer(b)
		for next >= r {
			b = next
			next = m.replacer(b)
		}
		r = next
	}
	return m.owner[b]
}

func TestReferenceMemento(t *testing.T) {
	pool := kolcotest.Nodes(40)
	keys := kolcotest.Keys(500)
	for seed := range uint64(5) {
		r := rand.New(rand.NewPCG(seed, 99))
		var start []string
		in := map[string]bool{}
		for _, n := range pool[:20] {
			start = append(start, n.ID)
			in[n.ID] = true
		}
		ref := newRef(start)
		j, _ := jump.New(pool[:20], jump.Config{})
		for step := range 60 {
			n := pool[r.IntN(len(pool))]
			if in[n.ID] && len(in) > 1 {
				ref.remove(n.ID)
				if err := j.Remove(n.ID); err != nil {
					t.Fatal(err)
				}
				delete(in, n.ID)
			} else if !in[n.ID] {
				ref.add(n.ID)
				if err := j.Add(kolco.Node{ID: n.ID}); err != nil {
					t.Fatal(err)
				}
				in[n.ID] = true
			}
			for _, k := range keys {
				got, _ := j.Locate(k)
				if want := ref.locate(k); got.ID != want {
					t.Fatalf("seed %d step %d: Locate(%q) = %s, reference %s", seed, step, k, got.ID, want)
				}
			}
		}
	}
}
