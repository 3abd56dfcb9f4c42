package fragment_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco/proxy/internal/fragment"
)

// TestSplit holds Split to its promises over random requests: one part
// per server, in the order of each server's first key; each key in its
// server's part, at its place; each part's keys in the request's order;
// and the Groups reused from request to request.
func TestSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var g fragment.Groups
	for round := range 1000 {
		n := rng.IntN(50)
		servers := make([]int, n)
		for i := range servers {
			servers[i] = rng.IntN(1 + rng.IntN(12))
		}
		g.Split(n, func(i int) int { return servers[i] })
		var order []int // servers in the order of their first key
		for _, s := range servers {
			if !slices.Contains(order, s) {
				order = append(order, s)
			}
		}
		if len(g.Parts) != len(order) {
			t.Fatalf("round %d: %d parts for %d servers", round, len(g.Parts), len(order))
		}
		for p, s := range order {
			var want []int32
			for i, si := range servers {
				if si == s {
					want = append(want, int32(i))
				}
			}
			if g.Parts[p].Server != s || g.Parts[p].Keys != len(want) || !slices.Equal(g.Keys(p), want) {
				t.Fatalf("round %d: part %d is %+v with keys %v, want server %d with keys %v", round, p, g.Parts[p], g.Keys(p), s, want)
			}
			for pos, k := range want {
				if int(g.Group[k]) != p || int(g.Pos[k]) != pos {
					t.Fatalf("round %d: key %d in part %d at %d, want part %d at %d", round, k, g.Group[k], g.Pos[k], p, pos)
				}
			}
		}
	}
}

// TestSplitDoesNotAllocate: a request like one seen before is grouped
// without allocating.
func TestSplitDoesNotAllocate(t *testing.T) {
	var g fragment.Groups
	server := func(i int) int { return i * 7 % 5 }
	if n := testing.AllocsPerRun(100, func() { g.Split(40, server) }); n != 0 {
		t.Errorf("%v allocations per request", n)
	}
}
