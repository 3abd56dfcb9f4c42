package ring_test

import (
	"errors"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/ring"
)

// FuzzOperations drives a ring with an arbitrary program of adds, removes,
// re-weights and lookups. Each byte pair is one operation; the ring must
// never panic, every error must be one of the documented sentinels, and
// after each step every lookup must return a member node.
func FuzzOperations(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 3, 5, 1, 1, 2, 2}, uint8(3), "user:42")
	f.Add([]byte{1, 0, 1, 0, 3, 0}, uint8(1), "")               // remove from empty, lookup empty
	f.Add([]byte{0, 0, 0, 0, 2, 0, 2, 9}, uint8(0), "\xff\x00") // duplicate add, zero vnodes = default
	f.Add([]byte{0, 7, 4, 7, 3, 255}, uint8(2), "k")            // zero and large weights
	f.Fuzz(func(t *testing.T, program []byte, vnodes uint8, key string) {
		if len(program) > 64 {
			program = program[:64]
		}
		r, err := ring.New(nil, ring.Config{VNodes: int(vnodes % 40), ZoneAware: vnodes%2 == 0})
		if err != nil {
			t.Fatal(err)
		}
		var dst []kolco.Node
		for i := 0; i+1 < len(program); i += 2 {
			op, arg := program[i]%5, program[i+1]
			id := string(rune('a' + arg%8))
			switch op {
			case 0:
				err = r.Add(kolco.Node{ID: id, Weight: float64(arg%4) / 2, Zone: string(rune('x' + arg%3))})
			case 1:
				err = r.Remove(id)
			case 2:
				err = r.Reweight(id, float64(arg%5)-1)
			case 3:
				dst, err = r.LocateN(dst[:0], key, int(arg%12)-1)
				if err == nil && len(dst) != min(int(arg%12)-1, r.Len()) {
					t.Fatalf("LocateN returned %d nodes of %d", len(dst), r.Len())
				}
			case 4:
				var n *kolco.Node
				n, err = r.Locate(key)
				if err == nil && !member(r, n.ID) {
					t.Fatalf("Locate returned %q, not a member", n.ID)
				}
			}
			if err != nil && !isSentinel(err) {
				t.Fatalf("op %d: undocumented error %v", op, err)
			}
			checkAgainstReference(t, r, key, int(vnodes%40))
		}
	})
}

// checkAgainstReference rebuilds the ring's current node set in the
// straightforward reference and compares the owner of key.
func checkAgainstReference(t *testing.T, r *ring.Ring, key string, vnodes int) {
	nodes := r.Nodes()
	if len(nodes) == 0 {
		return
	}
	if vnodes == 0 {
		vnodes = ring.DefaultVNodes
	}
	ref := &refRing{vnodes: vnodes, hash: keyhash.XXH3, zone: map[string]string{}}
	for _, n := range nodes {
		ref.add(n.ID, n.EffectiveWeight(), n.Zone)
	}
	got, err := r.Locate(key)
	if err != nil {
		t.Fatal(err)
	}
	if want := ref.get(key); got.ID != want {
		t.Fatalf("Locate(%q) = %s, the reference says %s", key, got.ID, want)
	}
	if id, err := r.LocateID(key); err != nil || id != got.ID {
		t.Fatalf("LocateID(%q) = %q, %v; Locate says %s", key, id, err, got.ID)
	}
}

func member(r *ring.Ring, id string) bool {
	for _, n := range r.Nodes() {
		if n.ID == id {
			return true
		}
	}
	return false
}

func isSentinel(err error) bool {
	for _, s := range []error{kolco.ErrNoNodes, kolco.ErrDuplicateNode, kolco.ErrUnknownNode,
		kolco.ErrBadWeight, kolco.ErrBadNodeID, kolco.ErrBadCount, kolco.ErrBadConfig} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
