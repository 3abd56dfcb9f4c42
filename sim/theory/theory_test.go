package theory_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/sim/theory"
)

// TestModuloMovedCountsResidues checks the lcm formula against a count
// over one full period of residues.
func TestModuloMovedCountsResidues(t *testing.T) {
	for n := 1; n <= 12; n++ {
		for m := 1; m <= 12; m++ {
			period := n * m
			moved := 0
			for h := range period {
				if h%n != h%m {
					moved++
				}
			}
			want := float64(moved) / float64(period)
			if got := theory.ModuloMoved(n, m); math.Abs(got-want) > 1e-12 {
				t.Errorf("%d -> %d: %v, counted %v", n, m, got, want)
			}
		}
	}
}

func TestMovedShares(t *testing.T) {
	ten := kolcotest.Nodes(10)
	eleven := append(kolcotest.Nodes(10), kolco.Node{ID: "new"})
	heavy := kolcotest.Nodes(10)
	heavy[9].Weight = 3
	for _, c := range []struct {
		name          string
		before, after []kolco.Node
		want          float64
	}{
		{"add one to ten", ten, eleven, 1.0 / 11},
		{"remove one of eleven", eleven, ten, 1.0 / 11},
		{"same", ten, ten, 0},
		// node-9 goes from 1/10 to 3/12: it gains 3/12 - 1/10 = 0.15.
		{"reweight", ten, heavy, 0.15},
		{"replace all", kolcotest.Nodes(3), []kolco.Node{{ID: "x"}, {ID: "y"}, {ID: "z"}}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := theory.MovedShares(c.before, c.after); math.Abs(got-c.want) > 1e-12 {
				t.Errorf("%v, want %v", got, c.want)
			}
		})
	}
}

// TestMovedSharesIsStable: the sum runs in the nodes' order, so repeated
// calls agree to the last bit (a sum in map order did not).
func TestMovedSharesIsStable(t *testing.T) {
	before := []kolco.Node{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}}
	after := []kolco.Node{{ID: "a", Weight: 3}, {ID: "b"}, {ID: "c"}, {ID: "d"}}
	first := theory.MovedShares(before, after)
	for range 50 {
		if got := theory.MovedShares(before, after); got != first {
			t.Fatalf("%v, then %v", first, got)
		}
	}
}

// TestRandomFullZonesEnumerates checks the closed form against every
// r-subset of a small node set.
func TestRandomFullZonesEnumerates(t *testing.T) {
	sizes := []int{2, 3, 1, 2}
	var zoneOf []int
	for z, s := range sizes {
		for range s {
			zoneOf = append(zoneOf, z)
		}
	}
	n := len(zoneOf)
	for r := 1; r <= n; r++ {
		full, all := 0, 0
		for mask := range 1 << n {
			if bitsSet(mask) != r {
				continue
			}
			seen := map[int]bool{}
			for i := range n {
				if mask&(1<<i) != 0 {
					seen[zoneOf[i]] = true
				}
			}
			all++
			if len(seen) == min(r, len(sizes)) {
				full++
			}
		}
		want := float64(full) / float64(all)
		if got := theory.RandomFullZones(sizes, r); math.Abs(got-want) > 1e-12 {
			t.Errorf("r=%d: %v, enumeration %v", r, got, want)
		}
	}
}

func bitsSet(m int) int {
	c := 0
	for ; m != 0; m &= m - 1 {
		c++
	}
	return c
}

func ExampleMoved() {
	fmt.Printf("%.4f %.4f %.4f\n", theory.Moved("ring", 10, 11), theory.Moved("modulo", 10, 11), theory.Moved("modulo", 10, 20))
	fmt.Printf("%.4f %.3f\n", theory.RingSpread(10, 100), theory.Harmonic(10))
	// Output:
	// 0.0909 0.9091 0.5000
	// 0.0948 2.929
}
