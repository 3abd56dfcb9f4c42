package slots

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kolco-dev/kolco"
)

func FuzzKeySlot(f *testing.F) {
	// Hash-tag edge cases from the Redis Cluster specification.
	for _, k := range []string{"", "{}", "foo{}{bar}", "{{}}", "foo{{bar}}zap", "{user1000}.following", "\xff{\x80}"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		want := int(crc16Bitwise(hashTagRef(key)) & 16383)
		if got := KeySlot(key); got != want {
			t.Fatalf("KeySlot(%q) = %d, reference %d", key, got, want)
		}
	})
}

// isSentinel reports whether err wraps one of the documented errors.
func isSentinel(err error) bool {
	for _, s := range []error{kolco.ErrNoNodes, kolco.ErrDuplicateNode, kolco.ErrUnknownNode,
		kolco.ErrBadWeight, kolco.ErrBadNodeID, kolco.ErrBadCount, kolco.ErrBadConfig, ErrSlotMap} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// FuzzMembership reads ops as a program of membership changes and lookups:
// each op byte picks an action, the next bytes its arguments. Node IDs come
// from a small alphabet so that duplicates and unknown IDs are frequent.
func FuzzMembership(f *testing.F) {
	f.Add(byte(0), []byte{})                            // empty map, no ops
	f.Add(byte(3), []byte{3, 0, 4, 0, 9})               // lookups on an empty map
	f.Add(byte(2), []byte{1, 0, 1, 1, 3, 0, 4, 1, 200}) // remove every node, n > nodes
	f.Add(byte(5), []byte{0, 7, 0, 0, 7, 0, 2, 7, 255, 1, 9, 4, 3, 50, 5, 1, 1})
	f.Fuzz(func(t *testing.T, countExp byte, ops []byte) {
		cfg := Config{Count: 1 << (countExp % 12)}
		nodes := []kolco.Node{{ID: "n0"}, {ID: "n1", Weight: 2}}
		m, err := New(nodes[:int(countExp)%3], cfg)
		if err != nil {
			t.Fatal(err)
		}
		arg := func(i int) byte {
			if i < len(ops) {
				return ops[i]
			}
			return 0
		}
		for i := 0; i < len(ops) && i < 300; i += 3 {
			id := fmt.Sprintf("n%d", arg(i+1)%12)
			w := float64(arg(i+2)) - 1 // -1 and 0 are invalid for Reweight
			var err error
			switch ops[i] % 6 {
			case 0:
				err = m.Add(kolco.Node{ID: id, Weight: max(w, 0)})
			case 1:
				err = m.Remove(id)
			case 2:
				err = m.Reweight(id, w)
			case 3:
				var got *kolco.Node
				if got, err = m.Locate(id); err == nil && !hasNode(m.Nodes(), got.ID) {
					t.Fatalf("Locate returned %s, not a member", got.ID)
				}
			case 4:
				err = checkLocateN(t, m, id, int(arg(i+2))-1)
			case 5:
				_, err = m.Migrate(kolco.Change{Remove: []string{id}, Add: []kolco.Node{{ID: id}}})
			}
			if err != nil && !isSentinel(err) {
				t.Fatalf("op %d: error %v wraps no sentinel", ops[i]%6, err)
			}
		}
	})
}

func hasNode(nodes []kolco.Node, id string) bool {
	for _, n := range nodes {
		if n.ID == id {
			return true
		}
	}
	return false
}

func checkLocateN(t *testing.T, m *Map, key string, n int) error {
	got, err := m.LocateN(nil, key, n)
	if err != nil {
		return err
	}
	if want := min(n, len(m.Nodes())); len(got) != want {
		t.Fatalf("LocateN(%d) returned %d nodes, want %d", n, len(got), want)
	}
	seen := map[string]bool{}
	for _, nd := range got {
		if seen[nd.ID] {
			t.Fatalf("LocateN repeats %s", nd.ID)
		}
		seen[nd.ID] = true
	}
	return nil
}

// FuzzFromRanges reads triples (first, last, node) from data as a slot map
// over 64 slots: any error must be a sentinel, and an accepted map must
// give every slot the owner the ranges named.
func FuzzFromRanges(f *testing.F) {
	f.Add([]byte{})         // no ranges: an error with nodes
	f.Add([]byte{0, 63, 0}) // one node owns all
	f.Add([]byte{0, 31, 0, 32, 63, 1})
	f.Add([]byte{0, 40, 0, 30, 63, 1}) // overlap
	f.Add([]byte{5, 4, 0})             // reversed
	f.Fuzz(func(t *testing.T, data []byte) {
		nodes := []kolco.Node{{ID: "a"}, {ID: "b"}, {ID: "c"}}
		var ranges []Range
		for i := 0; i+2 < len(data) && i < 300; i += 3 {
			ranges = append(ranges, Range{int(int8(data[i])), int(int8(data[i+1])), string(rune('a' + data[i+2]%4))})
		}
		m, err := FromRanges(nodes, ranges, Config{Count: 64})
		if err != nil {
			if !isSentinel(err) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		for _, r := range ranges {
			for s := r.First; s <= r.Last; s++ {
				if nd, _ := m.Owner(s); nd.ID != r.ID {
					t.Fatalf("slot %d owned by %s, ranges say %s", s, nd.ID, r.ID)
				}
			}
		}
		if _, err := m.Rebalance(); err != nil {
			t.Fatal(err)
		}
	})
}
