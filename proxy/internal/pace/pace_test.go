package pace

import (
	"testing"
	"time"
)

// TestQuantile: a quantile read from the buckets is the sample's own,
// rounded up by at most an eighth of it, never down.
func TestQuantile(t *testing.T) {
	for _, c := range []struct {
		name string
		obs  []time.Duration
		q    float64
		want time.Duration
	}{
		{"empty", nil, 0.99, 0},
		{"one", []time.Duration{time.Millisecond}, 0.99, time.Millisecond},
		{"p50 of 1..100 ms", ms(1, 100), 0.5, 50 * time.Millisecond},
		{"p99 of 1..100 ms", ms(1, 100), 0.99, 99 * time.Millisecond},
		{"p100 of 1..100 ms", ms(1, 100), 1, 100 * time.Millisecond},
		{"nanoseconds", []time.Duration{3, 5, 7}, 1, 7},
		{"past the last bucket", []time.Duration{time.Hour}, 1, upper(buckets - 1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			var h Histogram
			for _, d := range c.obs {
				h.Observe(d)
			}
			got := h.Snapshot().Quantile(c.q)
			if got < c.want || got > c.want+c.want/8+1 {
				t.Errorf("Quantile(%v) = %v, want %v to %v", c.q, got, c.want, c.want+c.want/8+1)
			}
		})
	}
}

func ms(from, to int) []time.Duration {
	var out []time.Duration
	for i := from; i <= to; i++ {
		out = append(out, time.Duration(i)*time.Millisecond)
	}
	return out
}

// TestBuckets: every duration falls in the bucket whose end is past it,
// and the one before ends at or below it.
func TestBuckets(t *testing.T) {
	for d := time.Duration(0); d < 10*time.Second; d = d*9/8 + 1 {
		i := bucketOf(d)
		if upper(i) <= d || i > 0 && upper(i-1) > d {
			t.Fatalf("%v in bucket %d, which ends at %v (the one before at %v)", d, i, upper(i), upper(max(i-1, 0)))
		}
	}
}

// TestSub: an interval's counts are the later snapshot's less the
// earlier's.
func TestSub(t *testing.T) {
	var h Histogram
	h.Observe(time.Second)
	before := h.Snapshot()
	h.Observe(time.Millisecond)
	d := h.Snapshot().Sub(before)
	if d.Total() != 1 || d.Quantile(1) > 2*time.Millisecond {
		t.Errorf("interval: %d counted, max %v; want 1, about 1 ms", d.Total(), d.Quantile(1))
	}
}

// TestWindow: the window doubles from 1 while the p99 stays under the
// bound (slow start), halves when it passes, then grows by an eighth of
// the size it halved from, and stays within Min and Max; an interval with
// no signal counts as one under the bound. Watch's channel is closed by
// each look that changes the size, and by no other.
func TestWindow(t *testing.T) {
	w := NewWindow(Config{Max: 8, Min: 0.25}, 3*time.Millisecond)
	if w.Bound() != 6*time.Millisecond {
		t.Fatalf("bound %v, want twice the steady 3 ms", w.Bound())
	}
	under, over := 2*time.Millisecond, 10*time.Millisecond
	steps := []struct {
		p99  time.Duration
		ok   bool
		want float64
	}{
		{under, true, 2}, {under, true, 4}, {0, false, 8}, {under, true, 8},
		{over, true, 4}, {under, true, 5}, {under, true, 6},
		{over, true, 3}, {over, true, 1.5}, {over, true, 0.75}, {over, true, 0.375}, {over, true, 0.25}, {over, true, 0.25},
		{under, true, 0.28125},
	}
	for i, s := range steps {
		was, changed := w.Watch()
		if got := w.Look(s.p99, s.ok); got != s.want {
			t.Fatalf("look %d (p99 %v, signal %v): size %v, want %v", i, s.p99, s.ok, got, s.want)
		}
		select {
		case <-changed:
			if s.want == was {
				t.Errorf("look %d: the size stayed %v, and Watch's channel is closed", i, was)
			}
		default:
			if s.want != was {
				t.Errorf("look %d: the size went from %v to %v, and Watch's channel is open", i, was, s.want)
			}
		}
	}
	if peak, slowed := w.Peak(); peak != over || slowed != 7 {
		t.Errorf("peak %v, halved %d times; want %v, 7", peak, slowed, over)
	}
}

// TestWindowBound: an operator's bound is kept as it is; the default is
// Factor times the steady p99 and at least Floor.
func TestWindowBound(t *testing.T) {
	for _, c := range []struct {
		name   string
		cfg    Config
		steady time.Duration
		want   time.Duration
	}{
		{"set", Config{Bound: 50 * time.Millisecond}, time.Millisecond, 50 * time.Millisecond},
		{"twice the steady", Config{}, 4 * time.Millisecond, 8 * time.Millisecond},
		{"the floor", Config{}, 100 * time.Microsecond, time.Millisecond},
		{"no steady figure", Config{}, 0, time.Millisecond},
		{"three times", Config{Factor: 3}, 2 * time.Millisecond, 6 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := NewWindow(c.cfg, c.steady).Bound(); got != c.want {
				t.Errorf("bound %v, want %v", got, c.want)
			}
		})
	}
}

// TestRecent: the counts since the oldest of the last ten ticks, none
// before the first tick or after a reset.
func TestRecent(t *testing.T) {
	var h Histogram
	var r Recent
	if _, ok := r.Since(h.Snapshot()); ok {
		t.Fatal("counts before any tick")
	}
	for i := range 15 {
		h.Observe(time.Duration(i+1) * time.Millisecond)
		r.Tick(h.Snapshot())
	}
	h.Observe(time.Second)
	c, ok := r.Since(h.Snapshot())
	// Kept: the ticks after the 6th to the 15th observation; since the
	// oldest, the 7th to 15th and the second.
	if !ok || c.Total() != 10 || c.Quantile(0.01) < 7*time.Millisecond || c.Quantile(0.01) > 8*time.Millisecond {
		t.Errorf("since the oldest tick: %d counted, least %v; want 10, 7 ms", c.Total(), c.Quantile(0.01))
	}
	r.Reset()
	if _, ok := r.Since(h.Snapshot()); ok {
		t.Error("counts after a reset")
	}
}

// TestWindowSpansASecond: the window halves on the p99 of the last
// second's requests since it last halved, not of one tenth of a second's:
// a spell in which every client waited for a core (2% of one interval's
// requests slow, 0.2% of the second's) leaves it open, and slow requests
// that are more than one in a hundred of the second halve it, once; the
// count starts again after each halving.
func TestWindowSpansASecond(t *testing.T) {
	w := NewWindow(Config{Bound: 5 * time.Millisecond}, 0)
	var h Histogram
	l := &looks{last: h.Snapshot()}
	interval := func(fast, slow int) {
		for range fast {
			h.Observe(time.Millisecond)
		}
		for range slow {
			h.Observe(50 * time.Millisecond)
		}
		w.tick(l, h.Snapshot())
	}
	for range 9 {
		interval(1000, 0)
	}
	interval(980, 20)
	if _, halved := w.Peak(); halved != 0 || w.Size() != 4 {
		t.Fatalf("after one slow spell of a tenth of a second: halved %d times, size %v; want 0, 4", halved, w.Size())
	}
	interval(900, 100)
	if _, halved := w.Peak(); halved != 1 || w.Size() != 2 {
		t.Fatalf("after 1.2%% of a second's requests slow: halved %d times, size %v; want once, 2", halved, w.Size())
	}
	interval(1000, 0)
	if _, halved := w.Peak(); halved != 1 || w.Size() != 2.5 {
		t.Fatalf("after a fast interval: halved %d times, size %v; want once, 2.5 (the slow ones forgotten)", halved, w.Size())
	}
}
