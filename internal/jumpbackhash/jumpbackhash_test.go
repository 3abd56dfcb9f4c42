package jumpbackhash

import (
	"fmt"
	"testing"
)

// TestUniformHash4j checks three successive draws of Uniform from each
// seed against hash4j's PseudoRandomGenerator.uniformInt on
// PseudoRandomGeneratorProvider.splitMix64_V1() (github.com/dynatrace-oss/
// hash4j, run under Java 17), reset to the same seed. The bound 2^30+1
// rejects about a quarter of the draws, so its columns check the
// rejection too.
func TestUniformHash4j(t *testing.T) {
	bounds := []uint32{1, 2, 3, 7, 10, 1000, 1<<30 + 1, 1<<31 - 1}
	for _, c := range []struct {
		seed uint64
		want [][3]uint32
	}{
		{0x0000000000000000, [][3]uint32{{0, 0, 0}, {0, 1, 1}, {1, 1, 1}, {3, 4, 3}, {4, 6, 5}, {480, 631, 500}, {678320509, 537022804, 479404155}, {1032775383, 1356641017, 1074045606}}},
		{0x0000000000000001, [][3]uint32{{0, 0, 0}, {1, 0, 1}, {1, 1, 2}, {3, 2, 6}, {5, 3, 9}, {535, 396, 981}, {574658352, 1053594968, 999338563}, {1149316703, 851932723, 2107189934}}},
		{0x000000000000002a, [][3]uint32{{0, 0, 0}, {0, 1, 0}, {0, 2, 0}, {1, 4, 0}, {1, 6, 0}, {187, 696, 74}, {200989605, 748272705, 79947732}, {401979210, 1496545408, 159895464}}},
		{0x00000000deadbeef, [][3]uint32{{0, 0, 0}, {0, 0, 1}, {1, 0, 1}, {2, 1, 3}, {4, 2, 5}, {409, 256, 555}, {275268168, 596066055, 519592420}, {879031757, 550536336, 1192132109}}},
		{0xffffffffffffffff, [][3]uint32{{0, 0, 0}, {0, 1, 1}, {0, 2, 2}, {0, 6, 4}, {1, 8, 6}, {107, 859, 697}, {748462202, 854220981, 367008363}, {229807631, 1845182819, 1496924403}}},
		{0x9e3779b97f4a7c15, [][3]uint32{{0, 0, 0}, {1, 1, 0}, {1, 1, 1}, {4, 3, 3}, {6, 5, 4}, {631, 500, 446}, {678320509, 537022804, 479404155}, {1356641017, 1074045606, 958808309}}},
	} {
		for i, n := range bounds {
			t.Run(fmt.Sprintf("seed=%#x/n=%d", c.seed, n), func(t *testing.T) {
				s := c.seed
				for j, want := range c.want[i] {
					var got uint32
					got, s = Uniform(s, n)
					if got != want {
						t.Errorf("draw %d: %d, hash4j %d", j, got, want)
					}
				}
			})
		}
	}
}

// TestUniformRange checks that every draw is below its bound, for bounds
// around powers of two where the rejection threshold changes.
func TestUniformRange(t *testing.T) {
	for _, n := range []uint32{1, 2, 3, 1 << 16, 1<<16 + 1, 1 << 31, 1<<31 + 1, 1<<32 - 1} {
		s := uint64(n)
		for range 1000 {
			var got uint32
			if got, s = Uniform(s, n); got >= n {
				t.Fatalf("Uniform(_, %d) = %d", n, got)
			}
		}
	}
}
