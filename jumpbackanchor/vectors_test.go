package jumpbackanchor_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/jumpback"
	"github.com/kolco-dev/kolco/jumpbackanchor"
)

// byHash is a key hash that reads the key as the hexadecimal hash itself,
// so that a lookup asks for the bucket of a given 64-bit hash as hash4j's
// getBucket does.
func byHash(key string) uint64 {
	h, err := strconv.ParseUint(key, 16, 64)
	if err != nil {
		panic(err)
	}
	return h
}

func hashKey(h uint64) string { return fmt.Sprintf("%x", h) }

// mirror follows a hash4j history on a placement: each bucket hash4j
// adds gets a node of its own, so that the owner of a key names its
// bucket.
type mirror struct {
	t      *testing.T
	p      *jumpbackanchor.Placement
	onto   map[int]string // bucket -> node ID
	bucket map[string]int // node ID -> bucket
	fresh  int
}

func newMirror(t *testing.T, p *jumpbackanchor.Placement, ids []string) *mirror {
	m := &mirror{t: t, p: p, onto: map[int]string{}, bucket: map[string]int{}}
	for b, id := range ids { // New puts the nodes on buckets in ID order
		m.onto[b], m.bucket[id] = id, b
	}
	return m
}

// add adds a node, which must take bucket b as hash4j's addBucket did.
func (m *mirror) add(b int) {
	m.fresh++
	id := fmt.Sprintf("node-%03d", m.fresh)
	if err := m.p.Add(kolco.Node{ID: id}); err != nil {
		m.t.Fatal(err)
	}
	m.onto[b], m.bucket[id] = id, b
}

// remove removes the node on bucket b.
func (m *mirror) remove(b int) {
	if err := m.p.Remove(m.onto[b]); err != nil {
		m.t.Fatal(err)
	}
	delete(m.bucket, m.onto[b])
	delete(m.onto, b)
}

// hash4jKey is the i-th key hash of the digests: i times 0x9e3779b97f4a7c15
// xor i>>3.
func hash4jKey(i int) uint64 { return uint64(i)*0x9e3779b97f4a7c15 ^ uint64(i>>3) }

// digest is h = 31*h + bucket over the first n key hashes, 0 without
// nodes, as the figures were printed.
func (m *mirror) digest(n int) uint64 {
	var h uint64
	for i := range n {
		owner, err := m.p.Locate(hashKey(hash4jKey(i)))
		if err != nil {
			return 0
		}
		h = h*31 + uint64(m.bucket[owner.ID])
	}
	return h
}

// The TestHash4j tests follow histories of hash4j's JumpBackAnchorHash
// (see hash4j_test.go) and check, after each step, that every node took
// the bucket hash4j gave it and that keys land on the buckets hash4j gives
// them.

func TestHash4jHistory(t *testing.T) {
	p, err := jumpbackanchor.New(nil, jumpbackanchor.Config{Hash: byHash})
	if err != nil {
		t.Fatal(err)
	}
	m := newMirror(t, p, nil)
	for i, op := range strings.Fields(hash4jHistory) {
		b, _ := strconv.Atoi(op[1:])
		if op[0] == '+' {
			m.add(b)
		} else {
			m.remove(b)
		}
		if got := m.digest(200); got != hash4jHistoryDigests[i] {
			t.Fatalf("step %d (%s): digest %#x, hash4j %#x", i, op, got, hash4jHistoryDigests[i])
		}
	}
	// hash4j's getState after the history: 27 buckets, 7, 2 and 17
	// removed in that order, which the next adds take back from the
	// last.
	if total, working := p.Buckets(); total != 27 || working != 24 {
		t.Errorf("Buckets() = %d, %d; hash4j has 27, 24", total, working)
	}
	for _, b := range []int{17, 2, 7, 27} {
		m.add(b)
	}
	if total, working := p.Buckets(); total != 28 || working != 28 {
		t.Errorf("after 4 adds: Buckets() = %d, %d; want 28, 28", total, working)
	}
	// With none removed, a key is on JumpBackHash's bucket: so each
	// node is on the bucket the mirror says it took.
	for i := range 2000 {
		h := hash4jKey(i)
		owner, _ := p.Locate(hashKey(h))
		if got, want := m.bucket[owner.ID], jumpback.Bucket(h, 28); got != want {
			t.Fatalf("hash %#x on bucket %d, JumpBackHash gives %d", h, got, want)
		}
	}
}

func TestHash4jRandomRemovals(t *testing.T) {
	ids := make([]string, 300)
	for b := range ids {
		ids[b] = fmt.Sprintf("b%03d", b)
	}
	nodes := make([]kolco.Node, len(ids))
	for i, id := range ids {
		nodes[i] = kolco.Node{ID: id}
	}
	p, err := jumpbackanchor.New(nodes, jumpbackanchor.Config{Hash: byHash})
	if err != nil {
		t.Fatal(err)
	}
	m := newMirror(t, p, ids)
	if got := m.digest(2000); got != hash4jDigest300 {
		t.Fatalf("300 buckets: digest %#x, hash4j %#x", got, uint64(hash4jDigest300))
	}
	for _, b := range hash4jRemoved {
		m.remove(b)
	}
	if got := m.digest(2000); got != hash4jDigest100 {
		t.Fatalf("after 200 removals: digest %#x, hash4j %#x", got, uint64(hash4jDigest100))
	}
	for _, b := range hash4jAdded {
		m.add(b)
	}
	if got := m.digest(2000); got != hash4jDigest150 {
		t.Fatalf("after 50 adds: digest %#x, hash4j %#x", got, uint64(hash4jDigest150))
	}
}

// TestHash4jREADME checks the example of hash4j's README: three buckets,
// then bucket 1 removed.
func TestHash4jREADME(t *testing.T) {
	p, _ := jumpbackanchor.New([]kolco.Node{{ID: "0"}, {ID: "1"}, {ID: "2"}}, jumpbackanchor.Config{Hash: byHash})
	keys := []string{"48ac502166f761a8", "9b7193f97ec9cb79", "6ce88bf7de8c06c2"}
	check := func(want ...string) {
		t.Helper()
		for i, k := range keys {
			if got, _ := p.LocateID(k); got != want[i] {
				t.Errorf("key %s on bucket %s, hash4j's README says %s", k, got, want[i])
			}
		}
	}
	check("1", "0", "2")
	_ = p.Remove("1")
	check("2", "0", "2")
}

// TestHash4jExplicit checks a short history with buckets printed one by
// one: 10 buckets, 2, 9 and 5 removed, one added (it takes 5).
func TestHash4jExplicit(t *testing.T) {
	ids := []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}
	var nodes []kolco.Node
	for _, id := range ids {
		nodes = append(nodes, kolco.Node{ID: id})
	}
	p, _ := jumpbackanchor.New(nodes, jumpbackanchor.Config{Hash: byHash})
	_ = p.Remove("2")
	_ = p.Remove("9")
	_ = p.Remove("5")
	_ = p.Add(kolco.Node{ID: "5"})
	for i, c := range []struct {
		hash uint64
		want string
	}{{0, "7"}, {1, "5"}, {42, "3"}, {0xdeadbeef, "7"}, {0x0ddc0ffeebadf00d, "1"}, {0xffffffffffffffff, "7"}, {0x9e3779b97f4a7c15, "8"}, {0x112210f47de98115, "6"}} {
		if got, _ := p.LocateID(hashKey(c.hash)); got != c.want {
			t.Errorf("%d: hash %#x on bucket %s, hash4j %s", i, c.hash, got, c.want)
		}
	}
	if total, working := p.Buckets(); total != 10 || working != 8 {
		t.Errorf("Buckets() = %d, %d; hash4j's state has 10 buckets, 2 removed", total, working)
	}
}
