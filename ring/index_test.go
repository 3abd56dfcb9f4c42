package ring

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// TestSearchMatchesBinarySearch checks the indexed, branch-free search
// against sort.Search over the same points: for uniform points, for points
// crowded into a few slots (runs longer than scanWidth), with repeated
// points, and for hashes on, next to and beyond every point.
func TestSearchMatchesBinarySearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	gens := map[string]func() uint64{
		"uniform":  rng.Uint64,
		"crowded":  func() uint64 { return rng.Uint64N(1 << 20) },             // all in the first slots
		"repeated": func() uint64 { return rng.Uint64N(8) << 61 },             // runs of equal points
		"top":      func() uint64 { return math.MaxUint64 - rng.Uint64N(64) }, // at the end of the circle
	}
	for name, gen := range gens {
		for _, n := range []int{1, 2, 7, 8, 9, 100, 5000} {
			s := &Snapshot{points: make([]uint64, n)}
			for i := range s.points {
				s.points[i] = gen()
			}
			slices.Sort(s.points)
			s.owners = make([]uint32, n)
			for i := range s.owners {
				s.owners[i] = uint32(i)
			}
			s.buildIndex()
			want := func(h uint64) int {
				i := sort.Search(n, func(i int) bool { return s.points[i] >= h })
				if i == n {
					return 0
				}
				return i
			}
			probes := []uint64{0, 1, math.MaxUint64}
			for _, p := range s.points {
				probes = append(probes, p, p-1, p+1)
			}
			for range 2000 {
				probes = append(probes, rng.Uint64(), gen())
			}
			for _, h := range probes {
				w := want(h)
				if got := s.search(h); got != w {
					t.Fatalf("%s n=%d: search(%#x) = %d, want %d", name, n, h, got, w)
				}
				if got := s.owner(h); got != s.owners[w] {
					t.Fatalf("%s n=%d: owner(%#x) = %d, want %d", name, n, h, got, s.owners[w])
				}
			}
		}
	}
}
