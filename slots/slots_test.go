package slots

import (
	"cmp"
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

// targetsRef apportions count slots by listing every (node, seat) priority
// w/(seat+0.5), sorting them all and taking the count best: the Sainte-Laguë
// method without a heap. Nodes are sorted by ID.
func targetsRef(nodes []kolco.Node, count int) []int {
	type seat struct {
		prio float64
		node int
	}
	var all []seat
	for i, nd := range nodes {
		for s := range count {
			all = append(all, seat{nd.EffectiveWeight() / (float64(s) + 0.5), i})
		}
	}
	slices.SortFunc(all, func(a, b seat) int {
		if c := cmp.Compare(b.prio, a.prio); c != 0 {
			return c
		}
		return cmp.Compare(a.node, b.node)
	})
	out := make([]int, len(nodes))
	for _, s := range all[:count] {
		out[s.node]++
	}
	return out
}

func counts(m *Map) []int {
	c := m.SlotCounts()
	var out []int
	for _, nd := range m.Nodes() {
		out = append(out, c[nd.ID])
	}
	return out
}

func owners(m *Map) []string {
	out := make([]string, m.Count())
	for s := range out {
		if nd, err := m.Owner(s); err == nil {
			out[s] = nd.ID
		}
	}
	return out
}

func TestNewMatchesReferenceApportionment(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 30 {
		nodes := mkNodes(1 + r.IntN(12))
		for i := range nodes {
			nodes[i].Weight = []float64{0, 1, 2, 0.5, 3.7, 10}[r.IntN(6)]
		}
		count := []int{1, 8, 64, 256}[trial%4]
		m, err := New(nodes, Config{Count: count})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := counts(m), targetsRef(m.Nodes(), count); !slices.Equal(got, want) {
			t.Fatalf("trial %d: counts %v, reference %v", trial, got, want)
		}
	}
}

func TestNewContiguousInIDOrder(t *testing.T) {
	nodes := mkNodes(5)
	slices.Reverse(nodes)
	m, err := New(nodes, Config{})
	if err != nil {
		t.Fatal(err)
	}
	rs := m.Ranges()
	if len(rs) != 5 {
		t.Fatalf("ranges %v, want 5 runs", rs)
	}
	for i, r := range rs {
		if r.ID != fmt.Sprintf("node-%04d", i) {
			t.Errorf("run %d owned by %s", i, r.ID)
		}
	}
	// 16384 = 3*3277 + 2*3276: the lower IDs win the ties.
	if rs[0].Last != 3276 || rs[4].Last != 16383 || rs[4].First != 16384-3276 {
		t.Errorf("ranges %v", rs)
	}
}

// checkMinimal applies c to m and checks that the reported moves are exactly
// the slots whose owner changed, that their number is the lower bound (the
// slots of removed nodes plus every survivor's surplus over its new
// target), and that the new counts are the reference targets.
func checkMinimal(t *testing.T, m *Map, c kolco.Change) []Move {
	t.Helper()
	before, beforeCounts := owners(m), m.SlotCounts()
	planned, perr := m.Plan(c)
	moves, err := m.Migrate(c)
	if err != nil || perr != nil {
		t.Fatalf("Migrate(%+v): %v / Plan: %v", c, err, perr)
	}
	if !slices.Equal(planned, moves) {
		t.Errorf("Plan and Migrate disagree: %d vs %d moves", len(planned), len(moves))
	}
	after := owners(m)
	var diff []Move
	for s := range before {
		if before[s] != after[s] {
			diff = append(diff, Move{s, before[s], after[s]})
		}
	}
	if !slices.Equal(diff, moves) {
		t.Fatalf("reported moves differ from the actual change (%d vs %d)", len(moves), len(diff))
	}
	nodes := m.Nodes()
	want := targetsRef(nodes, m.Count())
	if got := counts(m); !slices.Equal(got, want) {
		t.Fatalf("counts %v, targets %v", got, want)
	}
	bound := 0
	kept := map[string]bool{}
	for i, nd := range nodes {
		kept[nd.ID] = true
		bound += max(0, beforeCounts[nd.ID]-want[i])
	}
	for id, n := range beforeCounts {
		if !kept[id] {
			bound += n
		}
	}
	if len(moves) != bound {
		t.Fatalf("%d moves, lower bound %d", len(moves), bound)
	}
	return moves
}

func TestChangesMoveFewestSlots(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	m, err := New(mkNodes(6), Config{Count: 1024})
	if err != nil {
		t.Fatal(err)
	}
	next := 100
	for step := range 60 {
		ids := m.Nodes()
		var c kolco.Change
		switch op := r.IntN(3); {
		case op == 0 || len(ids) < 2:
			for range 1 + r.IntN(2) {
				c.Add = append(c.Add, kolco.Node{ID: fmt.Sprintf("new-%d", next), Weight: float64(1 + r.IntN(4))})
				next++
			}
		case op == 1:
			c.Remove = []string{ids[r.IntN(len(ids))].ID}
		default:
			c.Update = []kolco.Node{{ID: ids[r.IntN(len(ids))].ID, Weight: 0.5 + float64(r.IntN(8))}}
		}
		moves := checkMinimal(t, m, c)
		for _, mv := range moves {
			switch {
			case len(c.Add) > 0 && !slices.ContainsFunc(c.Add, func(n kolco.Node) bool { return n.ID == mv.To }):
				t.Fatalf("step %d: add moved slot %d to old node %s", step, mv.Slot, mv.To)
			case len(c.Remove) > 0 && mv.From != c.Remove[0]:
				t.Fatalf("step %d: remove moved slot %d off %s", step, mv.Slot, mv.From)
			case len(c.Update) > 0 && mv.From != c.Update[0].ID && mv.To != c.Update[0].ID:
				t.Fatalf("step %d: reweight moved slot %d between other nodes", step, mv.Slot)
			}
		}
	}
}

func TestFromRangesAndRebalance(t *testing.T) {
	nodes := mkNodes(3)
	// An uneven cluster: a owns half, b a quarter, c a quarter.
	ranges := []Range{{0, 8191, "node-0000"}, {8192, 12287, "node-0001"}, {12288, 16383, "node-0002"}}
	m, err := FromRanges(nodes, ranges, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Ranges(); !slices.Equal(got, ranges) {
		t.Fatalf("Ranges() = %v, want %v", got, ranges)
	}
	if nd, _ := m.Owner(8192); nd.ID != "node-0001" {
		t.Errorf("Owner(8192) = %s", nd.ID)
	}
	moves := checkMinimal(t, m, kolco.Change{})
	for _, mv := range moves {
		if mv.From != "node-0000" {
			t.Errorf("rebalance moved slot %d off %s, which was not over target", mv.Slot, mv.From)
		}
	}
	if again, _ := m.Rebalance(); len(again) != 0 {
		t.Errorf("second Rebalance moved %d slots", len(again))
	}
}

func TestFromRangesErrors(t *testing.T) {
	nodes := mkNodes(2)
	cases := []struct {
		name   string
		ranges []Range
		want   error
	}{
		{"Gap", []Range{{0, 100, "node-0000"}, {102, 16383, "node-0001"}}, ErrSlotMap},
		{"Overlap", []Range{{0, 100, "node-0000"}, {100, 16383, "node-0001"}}, ErrSlotMap},
		{"OutOfRange", []Range{{0, 16384, "node-0000"}}, ErrSlotMap},
		{"Reversed", []Range{{5, 4, "node-0000"}}, ErrSlotMap},
		{"Negative", []Range{{-1, 16383, "node-0000"}}, ErrSlotMap},
		{"UnknownID", []Range{{0, 16383, "nope"}}, kolco.ErrUnknownNode},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := FromRanges(nodes, c.ranges, Config{}); !errors.Is(err, c.want) {
				t.Errorf("error %v, want %v", err, c.want)
			}
		})
	}
	if _, err := FromRanges(nil, nil, Config{}); err != nil {
		t.Errorf("empty map: %v", err)
	}
}

func TestBadConfig(t *testing.T) {
	for _, n := range []int{-1, 3, 100, MaxCount * 2} {
		if _, err := New(mkNodes(2), Config{Count: n}); !errors.Is(err, kolco.ErrBadConfig) {
			t.Errorf("Count %d: error %v, want ErrBadConfig", n, err)
		}
	}
}

func TestChangeErrorsLeaveMapUnchanged(t *testing.T) {
	m, _ := New(mkNodes(3), Config{Count: 64})
	before := owners(m)
	cases := []struct {
		c    kolco.Change
		want error
	}{
		{kolco.Change{Remove: []string{"nope"}}, kolco.ErrUnknownNode},
		{kolco.Change{Remove: []string{"node-0000", "node-0000"}}, kolco.ErrUnknownNode},
		{kolco.Change{Add: []kolco.Node{{ID: "node-0001"}}}, kolco.ErrDuplicateNode},
		{kolco.Change{Add: []kolco.Node{{ID: ""}}}, kolco.ErrBadNodeID},
		{kolco.Change{Update: []kolco.Node{{ID: "node-0001", Weight: -1}}}, kolco.ErrBadWeight},
		{kolco.Change{Update: []kolco.Node{{ID: "nope"}}}, kolco.ErrUnknownNode},
	}
	for _, c := range cases {
		if _, err := m.Migrate(c.c); !errors.Is(err, c.want) {
			t.Errorf("Migrate(%+v) error %v, want %v", c.c, err, c.want)
		}
		if _, err := m.Plan(c.c); !errors.Is(err, c.want) {
			t.Errorf("Plan(%+v) error %v, want %v", c.c, err, c.want)
		}
	}
	if !slices.Equal(owners(m), before) {
		t.Error("a failed change altered the map")
	}
	if _, err := m.Owner(64); !errors.Is(err, ErrSlotMap) {
		t.Errorf("Owner(64) error %v", err)
	}
}

func TestRemoveAllThenAdd(t *testing.T) {
	m, _ := New(mkNodes(2), Config{Count: 16})
	moves, err := m.Migrate(kolco.Change{Remove: []string{"node-0000", "node-0001"}})
	if err != nil || len(moves) != 16 || moves[0].To != "" {
		t.Fatalf("remove all: %v, %v", moves, err)
	}
	if _, err := m.Locate("k"); !errors.Is(err, kolco.ErrNoNodes) {
		t.Errorf("Locate on empty map: %v", err)
	}
	moves, err = m.Migrate(kolco.Change{Add: mkNodes(1)})
	if err != nil || len(moves) != 16 || moves[0].From != "" {
		t.Fatalf("add to empty: %v, %v", moves, err)
	}
}

func TestLocateUsesKeySlot(t *testing.T) {
	m, _ := New(mkNodes(7), Config{})
	for i := range 1000 {
		key := fmt.Sprintf("key:%d", i)
		got, _ := m.Locate(key)
		want, _ := m.Owner(KeySlot(key))
		if got.ID != want.ID || m.Slot(key) != KeySlot(key) {
			t.Fatalf("Locate(%q) = %s, owner of its slot %s", key, got.ID, want.ID)
		}
	}
}

func TestLocateN(t *testing.T) {
	m, _ := New(mkNodes(5), Config{Count: 16})
	for i := range 200 {
		key := fmt.Sprint(i)
		first, _ := m.Locate(key)
		got, err := m.LocateN(nil, key, 9)
		if err != nil || len(got) != 5 || got[0].ID != first.ID {
			t.Fatalf("LocateN(%q, 9) = %v, %v", key, got, err)
		}
		seen := map[string]bool{}
		for _, nd := range got {
			if seen[nd.ID] {
				t.Fatalf("LocateN(%q) repeats %s", key, nd.ID)
			}
			seen[nd.ID] = true
		}
		two, _ := m.LocateN(nil, key, 2)
		if !slices.Equal(two, got[:2]) {
			t.Fatalf("LocateN(2) %v is not a prefix of LocateN(9) %v", two, got)
		}
	}
	if _, err := m.LocateN(nil, "k", 0); !errors.Is(err, kolco.ErrBadCount) {
		t.Errorf("n=0: %v", err)
	}
	// More nodes than slots: some own nothing but LocateN still lists all.
	big, _ := New(mkNodes(10), Config{Count: 4})
	if got, _ := big.LocateN(nil, "k", 20); len(got) != 10 {
		t.Errorf("LocateN over 10 nodes and 4 slots returned %d nodes", len(got))
	}
}

func TestLookupsDoNotAllocate(t *testing.T) {
	m, _ := New(mkNodes(100), Config{})
	dst := make([]kolco.Node, 0, 8)
	key := "{user1000}.following"
	if n := testing.AllocsPerRun(200, func() { _, _ = m.Locate(key) }); n != 0 {
		t.Errorf("Locate allocates %v", n)
	}
	if n := testing.AllocsPerRun(200, func() { _, _ = m.LocateN(dst[:0], key, 3) }); n != 0 {
		t.Errorf("LocateN allocates %v", n)
	}
}

// locateNRef walks slot by slot from the key's slot, collecting owners in
// order of first appearance, then the other nodes in ID order.
func locateNRef(m *Map, key string, n int) []string {
	var out []string
	add := func(id string) {
		if len(out) < n && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	o := owners(m)
	for i := range o {
		add(o[(m.Slot(key)+i)%len(o)])
	}
	for _, nd := range m.Nodes() {
		add(nd.ID)
	}
	return out
}

func TestLocateNMatchesSlotWalk(t *testing.T) {
	m, _ := New(mkNodes(6), Config{Count: 128})
	_ = m.Add(kolco.Node{ID: "x", Weight: 3})
	_ = m.Remove("node-0002")
	_ = m.Reweight("node-0004", 0.25)
	for i := range 300 {
		key := fmt.Sprint("k", i)
		for _, n := range []int{1, 2, 4, 9} {
			got, err := m.LocateN(nil, key, n)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, nd := range got {
				ids = append(ids, nd.ID)
			}
			if want := locateNRef(m, key, n); !slices.Equal(ids, want) {
				t.Fatalf("LocateN(%q, %d) = %v, slot walk %v", key, n, ids, want)
			}
		}
	}
}

func TestErrSlotMapIsBadConfig(t *testing.T) {
	_, err := FromRanges(mkNodes(1), nil, Config{})
	if !errors.Is(err, ErrSlotMap) || !errors.Is(err, kolco.ErrBadConfig) {
		t.Errorf("uncovered map: error %v, want ErrSlotMap wrapping ErrBadConfig", err)
	}
}

// TestHashReplacesCRC16 checks Config.Hash: the slot is the low bits of
// the finalized hash of the hash tag, so keys sharing a tag still share a
// slot.
func TestHashReplacesCRC16(t *testing.T) {
	for _, h := range []keyhash.Func{keyhash.XXH3, keyhash.CRC32} {
		m, err := New(mkNodes(5), Config{Count: 1024, Hash: h})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 500 {
			key := fmt.Sprintf("{user%d}.following", i)
			want := int(keyhash.Finalized(h)(HashTag(key)) & 1023)
			if got := m.Slot(key); got != want {
				t.Fatalf("Slot(%q) = %d, want %d", key, got, want)
			}
			a, _ := m.Locate(key)
			b, _ := m.Locate(fmt.Sprintf("{user%d}.followers", i))
			if a.ID != b.ID {
				t.Fatalf("keys of tag user%d on %s and %s", i, a.ID, b.ID)
			}
		}
	}
}
