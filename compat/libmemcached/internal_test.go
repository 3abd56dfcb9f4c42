package libmemcached

import "testing"

// TestWeightedPoints checks the float32 point count against values worked
// out by hand from the C expression: equal weights give 160 except where
// float32 rounding lands just below a multiple of 4 (n = 25 gives 156).
func TestWeightedPoints(t *testing.T) {
	cases := []struct {
		w, total uint64
		n, want  int
	}{
		{1, 1, 1, 160},
		{1, 3, 3, 160},
		{1, 25, 25, 156},
		{1, 6, 4, 104},
		{3, 6, 4, 320},
		{1, 1000, 2, 0},
	}
	for _, c := range cases {
		if got := weightedPoints(c.w, c.total, c.n); got != c.want {
			t.Errorf("weightedPoints(%d, %d, %d) = %d, want %d", c.w, c.total, c.n, got, c.want)
		}
	}
}
