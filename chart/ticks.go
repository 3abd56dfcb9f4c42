package chart

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
)

// gonum's DefaultTicks aims at three labels, at steps such as 0.4, 0.15 or
// 0.06 (labels at 20%, 60%, 100%, or 5%, 20%, 35%) that start off the
// axis's ends, and its LogTicks label powers of ten only (an axis from 10
// to 100 nodes reads "10" and "100").
// The tickers here label round numbers, enough of them to read a value off
// the axis.

// maxIntervals bounds the labelled intervals of a linear axis: at least
// about 2.5 times fewer follow from the 1-2-5 steps.
const maxIntervals = 6

// eps absorbs floating-point error when a value is compared with a tick.
const eps = 1e-9

// niceStep returns the distance between labelled ticks of a linear axis
// from lo to hi: 1, 2 or 5 times a power of ten, the smallest that gives
// at most maxIntervals intervals.
func niceStep(lo, hi float64) float64 {
	span := hi - lo
	if !(span > 0) {
		return 1
	}
	mag := math.Pow10(int(math.Floor(math.Log10(span / maxIntervals))))
	for _, m := range []float64{1, 2, 5} {
		if span/(m*mag) <= maxIntervals+eps {
			return m * mag
		}
	}
	return 10 * mag
}

// niceAxis sets a linear axis to start and end on labelled ticks, from 0
// when no value is negative (a share or a time read against 0, not
// against the smallest measurement), and labels it with linearTicks.
func niceAxis(a *plot.Axis, percent bool) {
	lo, hi := a.Min, a.Max
	if lo >= 0 {
		lo = 0
	}
	if !(hi > lo) {
		hi = lo + 1
	}
	step := niceStep(lo, hi)
	a.Min = math.Floor(lo/step+eps) * step
	a.Max = math.Ceil(hi/step-eps) * step
	a.Tick.Marker = linearTicks{step: step, percent: percent}
}

// linearTicks labels every multiple of step, in percent when percent is
// set, all with the same number of decimals; minor ticks divide each
// step in 5 (steps of 1 and 5) or 2 (steps of 2).
type linearTicks struct {
	step    float64 // 0: chosen from the range by niceStep
	percent bool
}

// Ticks returns the ticks from lo to hi.
func (t linearTicks) Ticks(lo, hi float64) []plot.Tick {
	step := t.step
	if step <= 0 || (hi-lo)/step > 10*maxIntervals { // not the range it was chosen for
		step = niceStep(lo, hi)
	}
	scale := 1.0
	if t.percent {
		scale = 100
	}
	decimals := max(0, -int(math.Floor(math.Log10(step*scale)+eps)))
	minor := step / 5
	if m := step / math.Pow10(int(math.Floor(math.Log10(step)+eps))); math.Abs(m-2) < 1e-6 {
		minor = step / 2
	}
	var ticks []plot.Tick
	for k := math.Ceil(lo/minor - eps); k <= math.Floor(hi/minor+eps); k++ {
		v := k * minor
		if q := v / step; math.Abs(q-math.Round(q)) < 1e-6 {
			v = math.Round(q) * step
			label := strconv.FormatFloat(v*scale, 'f', decimals, 64)
			if v == 0 {
				label = strconv.FormatFloat(0, 'f', decimals, 64) // never "-0"
			}
			if t.percent {
				label += "%"
			}
			ticks = append(ticks, plot.Tick{Value: v, Label: label})
			continue
		}
		ticks = append(ticks, plot.Tick{Value: v})
	}
	return ticks
}

// logTicks labels a log axis at 1, 2 and 5 times powers of ten, or more
// or fewer of the mantissas 1 to 9 as the axis spans fewer or more
// decades, and marks the others as minor ticks. An axis too short to hold
// two of them is labelled as a linear one.
type logTicks struct {
	percent bool
}

// logMantissas returns the mantissas labelled on a log axis spanning the
// given number of decades: all on a short axis, fewer as it grows, so
// that labels stay apart on a chart's height.
func logMantissas(decades float64) []int {
	switch {
	case decades <= 0.5+eps:
		return []int{1, 2, 3, 4, 5, 6, 7, 8, 9}
	case decades <= 1.2:
		return []int{1, 2, 3, 5}
	case decades <= 3.2:
		return []int{1, 2, 5}
	case decades <= 6.5:
		return []int{1, 3}
	}
	return []int{1}
}

// Ticks returns the ticks from lo to hi, both > 0.
func (t logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return linearTicks{percent: t.percent}.Ticks(lo, hi)
	}
	labelled := logMantissas(math.Log10(hi / lo))
	var ticks []plot.Tick
	labels := 0
	for e := int(math.Floor(math.Log10(lo))); e <= int(math.Ceil(math.Log10(hi))); e++ {
		for m := 1; m <= 9; m++ {
			// Parsed, not multiplied: 3e-1 is 0.3, 3*0.1 is not.
			v, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", m, e), 64)
			if v < lo*(1-eps) || v > hi*(1+eps) {
				continue
			}
			tick := plot.Tick{Value: v}
			if slices.Contains(labelled, m) {
				tick.Label, labels = logLabel(m, e, t.percent), labels+1
			}
			ticks = append(ticks, tick)
		}
	}
	if labels < 2 {
		return linearTicks{percent: t.percent}.Ticks(lo, hi)
	}
	return ticks
}

// logLabel writes m times 10^e, times 100 with a % sign when percent is
// set, without an exponent when it is a plain number of sensible length.
func logLabel(m, e int, percent bool) string {
	suffix := ""
	if percent {
		e, suffix = e+2, "%"
	}
	v, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", m, e), 64)
	if e < -4 || e > 8 {
		return strconv.FormatFloat(v, 'g', -1, 64) + suffix
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + suffix
}
