package bench

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestLibsPlaceOnMembers checks that every adapter builds, answers with one
// of its nodes, and after an Add answers with the new node for some keys:
// a comparison of adapters that silently returned "" would be meaningless.
func TestLibsPlaceOnMembers(t *testing.T) {
	ids := NodeIDs(10)
	keys := Keys(2000)
	for _, l := range Libs() {
		t.Run(l.Short, func(t *testing.T) {
			inst, err := l.New(ids, max(l.DefaultVNodes, 1))
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				if got := inst.Lookup(k); !slices.Contains(ids, got) {
					t.Fatalf("Lookup(%q) = %q, not a node", k, got)
				}
			}
			extra := NewNodeID(0)
			if err := inst.Add(extra); err != nil {
				t.Fatal(err)
			}
			gained := 0
			for _, k := range keys {
				if inst.Lookup(k) == extra {
					gained++
				}
			}
			if gained == 0 {
				t.Errorf("no key moved to the added node %s", extra)
			}
		})
	}
}

// TestKolcoLookupsDoNotAllocate checks the table's allocation column for
// kolco's placements through the adapters.
func TestKolcoLookupsDoNotAllocate(t *testing.T) {
	keys := Keys(1024)
	for _, l := range Libs() {
		if !l.Kolco {
			continue
		}
		inst, err := l.New(NodeIDs(100), l.DefaultVNodes)
		if err != nil {
			t.Fatal(err)
		}
		if a := Allocs(inst.Loop, keys); a != 0 {
			t.Errorf("%s: %v allocations per lookup", l.Name, a)
		}
	}
}

// TestMeasuresAreSane runs each measurement once on small inputs, so that
// cmd/compare cannot break unnoticed.
func TestMeasuresAreSane(t *testing.T) {
	keys := Keys(1024)
	l := Libs()[0]
	inst, _, err := HeapBytes(func() (Instance, error) { return l.New(NodeIDs(10), 10) })
	if err != nil {
		t.Fatal(err)
	}
	if ns := NsPerOp(inst.Loop, keys, time.Millisecond); ns <= 0 {
		t.Errorf("NsPerOp = %v", ns)
	}
	for _, size := range []int{0, 7, 8, 100, 1 << 16} {
		if ns := NsPerOp(RandomReads(size, 2), keys, time.Millisecond); ns <= 0 {
			t.Errorf("NsPerOp(RandomReads(%d, 2)) = %v", size, ns)
		}
	}
	if med := Interleaved([]Loop{HashAlone, inst.Loop}, keys, time.Millisecond, 3); len(med) != 2 || med[0] <= 0 || med[1] <= 0 {
		t.Errorf("Interleaved = %v", med)
	}
	if b := Balance(inst.Lookup, keys, 10); b < 1 {
		t.Errorf("Balance = %v, below 1", b)
	}
	if m := Moved(inst.Lookup, inst.Lookup, keys); m != 0 {
		t.Errorf("Moved between a placement and itself = %v", m)
	}
	if _, err := TimeAdd(l, NodeIDs(10), 10, 1); err != nil {
		t.Fatal(err)
	}
	if tp := Throughput(inst.Loop, keys, 2, time.Millisecond); tp <= 0 {
		t.Errorf("Throughput = %v", tp)
	}
	rep, err := LookupsDuringChanges(inst.Loop, keys, func(int) error { return nil }, time.Millisecond)
	if err != nil || rep.MeanNs <= 0 {
		t.Errorf("LookupsDuringChanges = %+v, %v", rep, err)
	}
}

// TestLoopsAgreeWithLookup checks that every library's timed loop answers
// as its Lookup does: the sum of the owners' name lengths over the keys.
func TestLoopsAgreeWithLookup(t *testing.T) {
	ids := NodeIDs(10)
	keys := Keys(1024)
	for _, l := range Libs() {
		t.Run(l.Short, func(t *testing.T) {
			inst, err := l.New(ids, max(l.DefaultVNodes, 1))
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, k := range keys {
				want += len(inst.Lookup(k))
			}
			if got := inst.Loop(keys); got != want {
				t.Errorf("Loop = %d, Lookup sums to %d", got, want)
			}
		})
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		t.Run(fmt.Sprint(c.xs), func(t *testing.T) {
			if got := Median(append([]float64(nil), c.xs...)); got != c.want {
				t.Errorf("Median(%v) = %v, want %v", c.xs, got, c.want)
			}
		})
	}
}
