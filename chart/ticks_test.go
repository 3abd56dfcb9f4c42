package chart

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

// labelled returns the labelled ticks an axis draws over its range, and
// checks that each label writes its value (times 100 with a % sign when
// percent).
func labelled(t *testing.T, a plot.Axis, percent bool) []plot.Tick {
	t.Helper()
	var out []plot.Tick
	for _, tk := range a.Tick.Marker.Ticks(a.Min, a.Max) {
		if tk.Label == "" || tk.Value < a.Min || tk.Value > a.Max {
			continue
		}
		text, want := tk.Label, tk.Value
		if percent {
			var ok bool
			if text, ok = strings.CutSuffix(text, "%"); !ok {
				t.Errorf("label %q has no %% sign", tk.Label)
			}
			want *= 100
		}
		got, err := strconv.ParseFloat(text, 64)
		if err != nil || math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("label %q for the value %g", tk.Label, tk.Value)
		}
		out = append(out, tk)
	}
	return out
}

// isRoundStep reports whether d is 1, 2 or 5 times a power of ten.
func isRoundStep(d float64) bool {
	m := d / math.Pow10(int(math.Floor(math.Log10(d)+1e-9)))
	for _, r := range []float64{1, 2, 5, 10} {
		if math.Abs(m-r) < 1e-6 {
			return true
		}
	}
	return false
}

// TestLinearTicksAreRound: a linear y axis is labelled at equal steps of
// 1, 2 or 5 times a power of ten (not 20%, 60%, 100%), with between 3 and
// 8 labels, all with the same number of decimals, and begins and ends on
// a label.
func TestLinearTicksAreRound(t *testing.T) {
	for _, c := range []struct {
		lo, hi  float64
		percent bool
	}{
		{0.003, 0.9, true}, {0.003, 0.4, true}, {0.0015, 0.17, true}, {0.04, 0.23, true},
		{0.0001, 0.0003, true}, {0.0911, 0.0912, true}, {9, 52, false}, {1200, 98000, false}, {0, 0, false},
	} {
		for kind, ch := range map[string]Chart{
			"lines": Lines{LogX: true, Percent: c.percent, Series: []Series{{Name: "s", X: []float64{1, 10}, Y: []float64{c.lo, c.hi}}}},
			"bars":  Bars{Percent: c.percent, Categories: []string{"a", "b"}, Groups: []Group{{Name: "g", Values: []float64{c.lo, c.hi}}}},
		} {
			t.Run(fmt.Sprintf("%s %g to %g", kind, c.lo, c.hi), func(t *testing.T) {
				p, err := ch.plot()
				if err != nil {
					t.Fatal(err)
				}
				ticks := labelled(t, p.Y, c.percent)
				if len(ticks) < 3 || len(ticks) > 8 {
					t.Fatalf("%d labels %v, want 3 to 8", len(ticks), ticks)
				}
				step := ticks[1].Value - ticks[0].Value
				if !isRoundStep(step) {
					t.Errorf("labels %v are %g apart, not 1, 2 or 5 times a power of ten", ticks, step)
				}
				for i, tk := range ticks {
					if q := tk.Value / step; math.Abs(q-math.Round(q)) > 1e-6 {
						t.Errorf("label %q is not a multiple of the step %g", tk.Label, step)
					}
					if i > 0 && math.Abs(tk.Value-ticks[i-1].Value-step) > 1e-9*step {
						t.Errorf("labels %v are unevenly spaced", ticks)
					}
					_, d0, _ := strings.Cut(strings.TrimSuffix(ticks[0].Label, "%"), ".")
					if _, d, _ := strings.Cut(strings.TrimSuffix(tk.Label, "%"), "."); len(d) != len(d0) {
						t.Errorf("labels %q and %q have different decimals", ticks[0].Label, tk.Label)
					}
				}
				if first, last := ticks[0].Value, ticks[len(ticks)-1].Value; first != p.Y.Min || last != p.Y.Max {
					t.Errorf("the axis runs from %g to %g, its labels from %g to %g", p.Y.Min, p.Y.Max, first, last)
				}
				if p.Y.Min > c.lo || p.Y.Max < c.hi {
					t.Errorf("the axis from %g to %g leaves out data from %g to %g", p.Y.Min, p.Y.Max, c.lo, c.hi)
				}
			})
		}
	}
}

// TestLogTicksLabelEnough: a log axis over one decade or more is labelled
// at least three times, at values of one significant digit (2, 5, 20,
// ... as well as the powers of ten); a shorter one falls back to round
// linear steps.
func TestLogTicksLabelEnough(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   int // labels at least
	}{
		{10, 100, 4}, {10, 1000, 5}, {1, 1000, 7}, {3, 300, 5}, {1, 1e6, 7}, {1, 1e12, 10}, {0.001, 0.1, 5}, {11, 19, 3}, {20, 40, 3},
	} {
		t.Run(fmt.Sprintf("%g to %g", c.lo, c.hi), func(t *testing.T) {
			ch := Lines{LogX: true, Series: []Series{{Name: "s", X: []float64{c.lo, c.hi}, Y: []float64{1, 2}}}}
			p, err := ch.plot()
			if err != nil {
				t.Fatal(err)
			}
			ticks := labelled(t, p.X, false)
			if len(ticks) < c.want {
				t.Fatalf("%d labels %v, want at least %d", len(ticks), ticks, c.want)
			}
			if c.hi/c.lo < 10 {
				return
			}
			for i, tk := range ticks {
				if m := tk.Value / math.Pow10(int(math.Floor(math.Log10(tk.Value)+1e-9))); math.Abs(m-math.Round(m)) > 1e-6 {
					t.Errorf("label %q has more than one significant digit", tk.Label)
				}
				if i > 0 && tk.Value/ticks[i-1].Value < 1.4 {
					t.Errorf("labels %q and %q crowd each other", ticks[i-1].Label, tk.Label)
				}
			}
		})
	}
}
