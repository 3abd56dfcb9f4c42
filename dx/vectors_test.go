package dx

import (
	"fmt"
	"testing"

	"github.com/kolco-dev/kolco"
)

// slotted returns a placement of capacity slots whose nodes, named so that
// their ID order is their slot order, work on slots 0..working-1, less the
// removed ones.
func slotted(t *testing.T, capacity, working int, removed []int) *state {
	t.Helper()
	nodes := make([]kolco.Node, working)
	for i := range nodes {
		nodes[i] = kolco.Node{ID: fmt.Sprintf("n%05d", i)}
	}
	p, err := New(nodes, Config{Capacity: capacity})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range removed {
		if err := p.Remove(nodes[b].ID); err != nil {
			t.Fatal(err)
		}
	}
	return p.m.Load()
}

// TestFindAuthors checks slots printed by DxHash::getNodeID of the
// authors' C++ implementation (github.com/ChaosD/DxHash, src/DxHash.cpp),
// built with g++ 12 on an SSE 4.2 machine, over a DxHash(capacity,
// working) after updateRemoval of the removed slots, for 32-bit keys (the
// authors' key type; a key hash's upper 32 bits here enter the first
// generator step). It checks find and first, which runs the probe loop of
// probe_amd64.s on amd64.
func TestFindAuthors(t *testing.T) {
	keys := []uint64{0, 1, 42, 0xdeadbeef, 0x7fffffff, 0xffffffff, 0x9e3779b9, 123456789}
	for _, c := range []struct {
		capacity, working int
		removed           []int
		want              []int
	}{
		{16, 11, nil, []int{7, 8, 2, 9, 5, 5, 8, 3}},
		{16, 16, nil, []int{7, 8, 14, 9, 5, 5, 8, 13}},
		{64, 40, []int{3, 17, 0, 39, 22}, []int{25, 24, 14, 37, 5, 5, 8, 11}},
		{1024, 600, []int{1, 2, 3, 500, 599, 77}, []int{295, 104, 446, 441, 517, 517, 437, 237}},
	} {
		s := slotted(t, c.capacity, c.working, c.removed)
		for i, k := range keys {
			if got := s.find(k, nil); got != c.want[i] {
				t.Errorf("capacity %d, %d working, removed %v: key %#x on slot %d, the authors' code gives %d",
					c.capacity, c.working, c.removed, k, got, c.want[i])
			}
			if got := s.first(k); got != c.want[i] {
				t.Errorf("capacity %d, %d working, removed %v: key %#x on slot %d by first, the authors' code gives %d",
					c.capacity, c.working, c.removed, k, got, c.want[i])
			}
		}
	}
}

// TestFindAuthorsDigest compares a million more lookups with the authors'
// code, by find and by first (the probe loop of probe_amd64.s on amd64): over 1024 slots with slots 0..699 working less those equal to 2
// modulo 5, h = 31*h + getNodeID(uint32(i*2654435761)) over i < 1,000,000
// gave 0x726fba9fa4eeefe0 there.
func TestFindAuthorsDigest(t *testing.T) {
	var removed []int
	for b := range 700 {
		if b%5 == 2 {
			removed = append(removed, b)
		}
	}
	s := slotted(t, 1024, 700, removed)
	var h, hf uint64
	for i := range uint64(1_000_000) {
		k := uint64(uint32(i * 2654435761))
		h = h*31 + uint64(s.find(k, nil))
		hf = hf*31 + uint64(s.first(k))
	}
	if h != 0x726fba9fa4eeefe0 {
		t.Errorf("digest %#x, the authors' code gives 0x726fba9fa4eeefe0", h)
	}
	if hf != 0x726fba9fa4eeefe0 {
		t.Errorf("digest by first %#x, the authors' code gives 0x726fba9fa4eeefe0", hf)
	}
}
