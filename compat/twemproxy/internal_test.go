package twemproxy

import "testing"

// TestPointsPerServer checks the float32 point count against values worked
// out by hand from the C expression: equal weights give 160, except where
// float32 rounding of 1/n*40*n lands just below 40 (n = 25 gives 156).
func TestPointsPerServer(t *testing.T) {
	cases := []struct {
		w, total uint64
		n, want  int
	}{
		{1, 1, 1, 160},
		{1, 3, 3, 160},
		{1, 25, 25, 156},
		{1, 10, 10, 160},
		{1, 6, 4, 104},  // 1/6*40*4 = 26.67 -> 26*4
		{3, 6, 4, 320},  // 0.5*40*4 = 80
		{1, 1000, 2, 0}, // 0.08 -> 0
	}
	for _, c := range cases {
		if got := pointsPerServer(c.w, c.total, c.n); got != c.want {
			t.Errorf("pointsPerServer(%d, %d, %d) = %d, want %d", c.w, c.total, c.n, got, c.want)
		}
	}
}
