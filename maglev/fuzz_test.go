package maglev

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kolco-dev/kolco"
)

// isSentinel reports whether err wraps one of the documented errors.
func isSentinel(err error) bool {
	for _, s := range []error{kolco.ErrNoNodes, kolco.ErrDuplicateNode, kolco.ErrUnknownNode,
		kolco.ErrBadWeight, kolco.ErrBadNodeID, kolco.ErrBadCount, kolco.ErrBadConfig} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

func FuzzNew(f *testing.F) {
	f.Add(0, 3, 1.0)
	f.Add(4, 2, 1.0) // not prime
	f.Add(2, 5, 1e-300)
	f.Add(13, 40, 1e300)
	f.Fuzz(func(t *testing.T, size, n int, w float64) {
		if size > 5000 {
			size = 5000 + size%2 // keep each run fast
		}
		nodes := make([]kolco.Node, max(0, n%64))
		for i := range nodes {
			nodes[i] = kolco.Node{ID: fmt.Sprint("n", i)}
		}
		if len(nodes) > 0 {
			nodes[0].Weight = w
		}
		tab, err := New(nodes, Config{TableSize: size})
		if err != nil {
			if !isSentinel(err) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		if got, err := tab.LocateN(nil, "k", len(nodes)+1); err == nil && len(got) != len(nodes) {
			t.Fatalf("LocateN listed %d of %d nodes", len(got), len(nodes))
		}
	})
}

// FuzzMembership reads ops as a program of membership changes and lookups:
// each op byte picks an action, the next bytes its arguments. Node IDs come
// from a small alphabet so that duplicates and unknown IDs are frequent.
func FuzzMembership(f *testing.F) {
	f.Add(byte(0), []byte{})                            // empty table, no ops
	f.Add(byte(3), []byte{3, 0, 4, 0, 9})               // lookups on an empty table
	f.Add(byte(2), []byte{1, 0, 1, 1, 3, 0, 4, 1, 200}) // remove every node, n > nodes
	f.Add(byte(5), []byte{0, 7, 0, 0, 7, 0, 2, 7, 255, 1, 9, 4, 3, 50, 5, 1, 1})
	f.Fuzz(func(t *testing.T, start byte, ops []byte) {
		nodes := []kolco.Node{{ID: "n0"}, {ID: "n1", Weight: 2}}
		tab, err := New(nodes[:int(start)%3], Config{TableSize: []int{2, 13, 101}[int(start)/3%3]})
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
			switch ops[i] % 5 {
			case 0:
				err = tab.Add(kolco.Node{ID: id, Weight: max(w, 0)})
			case 1:
				err = tab.Remove(id)
			case 2:
				err = tab.Reweight(id, w)
			case 3:
				var got *kolco.Node
				if got, err = tab.Locate(id); err == nil && !hasNode(tab.Nodes(), got.ID) {
					t.Fatalf("Locate returned %s, not a member", got.ID)
				}
			case 4:
				err = checkLocateN(t, tab, id, int(arg(i+2))-1)
			}
			if err != nil && !isSentinel(err) {
				t.Fatalf("op %d: error %v wraps no sentinel", ops[i]%5, err)
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

func checkLocateN(t *testing.T, tab *Table, key string, n int) error {
	got, err := tab.LocateN(nil, key, n)
	if err != nil {
		return err
	}
	if want := min(n, len(tab.Nodes())); len(got) != want {
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
