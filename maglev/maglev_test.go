package maglev

import (
	"errors"
	"fmt"
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

// populateRef is the paper's Algorithm 1 written plainly: every node's full
// permutation is listed up front, and rounds go node by node in ID order, a
// node taking an entry in round k when its turn floor(taken*wmax/w) has
// come. nodes must be sorted by ID.
func populateRef(nodes []kolco.Node, m int) []int {
	perm := make([][]int, len(nodes))
	wmax := 0.0
	for i, nd := range nodes {
		offset := int(keyhash.XXH3(nd.ID) % uint64(m))
		skip := int(keyhash.XXH64(nd.ID)%uint64(m-1)) + 1
		for j := range m {
			perm[i] = append(perm[i], (offset+j*skip)%m)
		}
		wmax = max(wmax, nd.EffectiveWeight())
	}
	entry := slices.Repeat([]int{-1}, m)
	next := make([]int, len(nodes))
	taken := make([]int, len(nodes))
	filled := 0
	for k := 0; filled < m; k++ {
		for i, nd := range nodes {
			ratio := wmax / nd.EffectiveWeight()
			if float64(int(float64(taken[i])*ratio)) > float64(k) || filled == m {
				continue
			}
			c := perm[i][next[i]]
			for entry[c] >= 0 {
				next[i]++
				c = perm[i][next[i]]
			}
			entry[c] = i
			next[i]++
			taken[i]++
			filled++
		}
	}
	return entry
}

func TestTableMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 40 {
		m := []int{2, 3, 13, 101, 1009}[trial%5]
		nodes := mkNodes(1 + r.IntN(15))
		for i := range nodes {
			if trial%2 == 0 { // equal weights take the round-robin path
				nodes[i].Weight = []float64{0, 1, 2, 0.3, 5}[r.IntN(5)]
			}
		}
		tab, err := New(nodes, Config{TableSize: m})
		if err != nil {
			t.Fatal(err)
		}
		s := tab.m.Load()
		want := populateRef(s.nodes, m)
		for e := range want {
			if int(s.entry[e]) != want[e] {
				t.Fatalf("trial %d (m=%d, %d nodes): entry %d = %d, reference %d", trial, m, len(nodes), e, s.entry[e], want[e])
			}
		}
	}
}

func TestDefaultTableMatchesReference(t *testing.T) {
	nodes := mkNodes(7)
	nodes[2].Weight = 3
	tab, _ := New(nodes, Config{})
	s := tab.m.Load()
	want := populateRef(s.nodes, DefaultTableSize)
	for e := range want {
		if int(s.entry[e]) != want[e] {
			t.Fatalf("entry %d = %d, reference %d", e, s.entry[e], want[e])
		}
	}
	key := "user:42"
	got, _ := tab.Locate(key)
	if wantID := s.nodes[want[keyhash.XXH3(key)%DefaultTableSize]].ID; got.ID != wantID {
		t.Errorf("Locate(%q) = %s, reference %s", key, got.ID, wantID)
	}
}

func TestBadConfig(t *testing.T) {
	for _, m := range []int{-7, 1, 4, 65536, 65539 * 3, MaxTableSize + 43} {
		if _, err := New(mkNodes(2), Config{TableSize: m}); !errors.Is(err, kolco.ErrBadConfig) {
			t.Errorf("TableSize %d: error %v, want ErrBadConfig", m, err)
		}
	}
	for _, m := range []int{2, 3, 65537, 655373} {
		if _, err := New(mkNodes(2), Config{TableSize: m}); err != nil {
			t.Errorf("TableSize %d (prime): %v", m, err)
		}
	}
}

// movedShare returns the share of entries whose owner differs between a and
// b, and the share that moved without either owner being in onto.
func movedShare(a, b *Table, onto map[string]bool) (moved, elsewhere float64) {
	sa, sb := a.m.Load(), b.m.Load()
	var mv, other int
	for e := range sa.entry {
		from, to := sa.nodes[sa.entry[e]].ID, sb.nodes[sb.entry[e]].ID
		if from != to {
			mv++
			if !onto[to] && !onto[from] {
				other++
			}
		}
	}
	n := float64(len(sa.entry))
	return float64(mv) / n, float64(other) / n
}

// TestDisruptionMeasured measures the share of the table (and so of
// uniformly hashed keys) that changes owner when one node joins or leaves,
// against the minimal 1/(n+1) or 1/n. Maglev trades some of that for
// balance: the excess is entries moving between nodes that did not change.
// With the default 65537 entries it measured about 0.2%, 0.6% and 0.6% of
// the table for 10, 100 and 1000 nodes; the test asserts under 1.5%.
func TestDisruptionMeasured(t *testing.T) {
	sizes := []int{10, 100, 1000}
	if testing.Short() {
		sizes = sizes[:2]
	}
	for _, n := range sizes {
		nodes := mkNodes(n + 1)
		small, _ := New(nodes[:n], Config{})
		big, _ := New(nodes, Config{})
		added := nodes[n].ID
		moved, excess := movedShare(small, big, map[string]bool{added: true})
		minimal := 1 / float64(n+1)
		t.Logf("%d -> %d nodes: moved %.4f of keys (minimal %.4f), excess %.4f", n, n+1, moved, minimal, excess)
		if excess > 0.015 {
			t.Errorf("add at %d nodes: excess %.4f over the 1.5%% bound", n, excess)
		}
		// Remove a node from the middle of the ID order.
		gone := nodes[n/2].ID
		rest, _ := New(slices.Delete(slices.Clone(nodes), n/2, n/2+1), Config{})
		moved, excess = movedShare(big, rest, map[string]bool{gone: true})
		t.Logf("%d -> %d nodes: moved %.4f of keys (minimal %.4f), excess %.4f", n+1, n, moved, minimal, excess)
		if excess > 0.015 {
			t.Errorf("remove at %d nodes: excess %.4f over the 1.5%% bound", n+1, excess)
		}
	}
}

// TestDisruptionNotMinimal shows the documented cost: some keys move
// between nodes that did not change.
func TestDisruptionNotMinimal(t *testing.T) {
	nodes := mkNodes(101)
	a, _ := New(nodes[:100], Config{})
	b, _ := New(nodes, Config{})
	if _, excess := movedShare(a, b, map[string]bool{nodes[100].ID: true}); excess == 0 {
		t.Error("adding a node moved no entries between old nodes; the documentation says it does")
	}
}

func TestWeightsShareEntries(t *testing.T) {
	nodes := mkNodes(4)
	for i := range nodes {
		nodes[i].Weight = float64(i + 1) // 1:2:3:4
	}
	tab, _ := New(nodes, Config{})
	got := tab.Entries()
	for i, nd := range nodes {
		want := float64(DefaultTableSize) * float64(i+1) / 10
		if d := float64(got[nd.ID]) - want; d > 2 || d < -2 {
			t.Errorf("%s (weight %d): %d entries, want %.0f±2", nd.ID, i+1, got[nd.ID], want)
		}
	}
}

func TestMembershipMatchesFreshBuild(t *testing.T) {
	nodes := mkNodes(8)
	tab, _ := New(nodes[:5], Config{TableSize: 1009})
	if err := tab.Add(nodes[5:]...); err != nil {
		t.Fatal(err)
	}
	if err := tab.Remove("node-0001", "node-0006"); err != nil {
		t.Fatal(err)
	}
	if err := tab.Reweight("node-0003", 2.5); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(nodes)
	want[3].Weight = 2.5
	want = slices.Delete(want, 6, 7)
	want = slices.Delete(want, 1, 2)
	fresh, _ := New(want, Config{TableSize: 1009})
	if !slices.Equal(tab.m.Load().entry, fresh.m.Load().entry) {
		t.Error("table after changes differs from a fresh build of the same node set")
	}
	for _, c := range []struct {
		err  error
		want error
	}{
		{tab.Add(kolco.Node{ID: "node-0000"}), kolco.ErrDuplicateNode},
		{tab.Remove("nope"), kolco.ErrUnknownNode},
		{tab.Remove("node-0000", "node-0000"), kolco.ErrUnknownNode},
		{tab.Reweight("node-0000", 0), kolco.ErrBadWeight},
		{tab.Reweight("nope", 1), kolco.ErrUnknownNode},
	} {
		if !errors.Is(c.err, c.want) {
			t.Errorf("error %v, want %v", c.err, c.want)
		}
	}
}

func TestLocateN(t *testing.T) {
	tab, _ := New(mkNodes(5), Config{TableSize: 101})
	for i := range 200 {
		key := fmt.Sprint(i)
		first, _ := tab.Locate(key)
		got, err := tab.LocateN(nil, key, 7)
		if err != nil || len(got) != 5 || got[0].ID != first.ID {
			t.Fatalf("LocateN(%q, 7) = %v, %v", key, got, err)
		}
		for j := range got {
			if slices.ContainsFunc(got[:j], func(n kolco.Node) bool { return n.ID == got[j].ID }) {
				t.Fatalf("LocateN(%q) repeats %s", key, got[j].ID)
			}
		}
	}
	// More nodes than entries: some nodes own none, LocateN still lists all.
	tiny, _ := New(mkNodes(9), Config{TableSize: 5})
	if got, _ := tiny.LocateN(nil, "k", 20); len(got) != 9 {
		t.Errorf("LocateN over 9 nodes and 5 entries returned %d nodes", len(got))
	}
	if _, err := tab.LocateN(nil, "k", 0); !errors.Is(err, kolco.ErrBadCount) {
		t.Errorf("n=0: %v", err)
	}
}

func TestLookupsDoNotAllocate(t *testing.T) {
	tab, _ := New(mkNodes(100), Config{})
	dst := make([]kolco.Node, 0, 8)
	if n := testing.AllocsPerRun(200, func() { _, _ = tab.Locate("some-key") }); n != 0 {
		t.Errorf("Locate allocates %v", n)
	}
	if n := testing.AllocsPerRun(200, func() { _, _ = tab.LocateN(dst[:0], "some-key", 3) }); n != 0 {
		t.Errorf("LocateN allocates %v", n)
	}
}
