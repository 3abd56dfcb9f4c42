package dx

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestFirstIsFind checks that first, the lookup's probe loop (in assembly
// on amd64), gives the slot find gives, over capacities from 16 to 1024
// slots with one node, a quarter, half and all of them working, some
// removed at random.
func TestFirstIsFind(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 1))
	for _, capacity := range []int{16, 256, 1024} {
		for _, working := range []int{1, capacity / 4, capacity / 2, capacity} {
			var removed []int
			for b := range working {
				if b > 0 && len(removed) < 32 && rng.IntN(10) == 0 {
					removed = append(removed, b)
				}
			}
			t.Run(fmt.Sprintf("capacity=%d/working=%d/removed=%d", capacity, working, len(removed)), func(t *testing.T) {
				s := slotted(t, capacity, working, removed)
				// A key probes capacity/working slots on average: fewer
				// keys where few slots work keep the test short.
				for range max(20000*working/capacity, 500) {
					kh := rng.Uint64()
					if got, want := s.first(kh), s.find(kh, nil); got != want {
						t.Fatalf("key hash %#x: first %d, find %d", kh, got, want)
					}
				}
			})
		}
	}
}
