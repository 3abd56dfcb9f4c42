package pace

import (
	"context"
	"sync"
	"time"
)

// Config sets a [Window]. Zero values mean the documented defaults.
type Config struct {
	// Bound is the clients' p99 the window keeps under. Zero: Factor
	// times the steady p99 passed to [NewWindow], and at least Floor.
	Bound time.Duration
	// Factor is the bound's multiple of the steady p99. Default 2.
	Factor float64
	// Floor is the least bound: under a millisecond a loopback's and a
	// busy scheduler's noise decides a p99, not the work. Default 1 ms.
	Floor time.Duration
	// Max is the most the window opens to. Default 4.
	Max float64
	// Min is the least it closes to: a sliver of work still runs, so
	// that a move ends even under clients that never rest. Default 1/32.
	Min float64
	// Interval is how often the window looks at the clients' latency.
	// Default 100 ms: a few hundred requests of a busy pool, and short
	// enough that a burst of slow requests ends within a few.
	Interval time.Duration
	// Samples is the fewest requests a look needs; with fewer the look
	// waits for more, up to ten intervals, and with fewer still there is
	// no signal and the window grows. Default 200, the fewest for which a
	// p99 is more than the slowest request or two.
	Samples uint64
}

func (c Config) withDefaults() Config {
	if c.Factor <= 0 {
		c.Factor = 2
	}
	if c.Floor <= 0 {
		c.Floor = time.Millisecond
	}
	if c.Max <= 0 {
		c.Max = 4
	}
	if c.Min <= 0 {
		c.Min = 1.0 / 32
	}
	if c.Interval <= 0 {
		c.Interval = 100 * time.Millisecond
	}
	if c.Samples == 0 {
		c.Samples = 200
	}
	return c
}

// Window is how much work may run at once beside the clients: a size
// of 3 is three units at once, one of 0.25 one unit a quarter of the
// time. It starts at 1 and doubles each interval whose p99 stays under
// the bound (slow start), until the first that passes it; from then on it
// halves at each that passes and grows by an eighth of the size it last
// halved from at each that does not (congestion avoidance), as TCP Reno
// does.
type Window struct {
	cfg Config
	// mu guards the size and the figures below.
	mu        sync.Mutex
	size      float64
	slowStart bool
	threshold float64
	bound     time.Duration
	// peak is the highest p99 of an interval; decreases counts the
	// halvings.
	peak      time.Duration
	decreases int
	// changed is closed, and replaced, when the size changes (see Watch).
	changed chan struct{}
}

// NewWindow returns a window at size 1 whose bound is cfg.Bound, or
// cfg.Factor times steady (the clients' p99 before the work began) and at
// least cfg.Floor.
func NewWindow(cfg Config, steady time.Duration) *Window {
	cfg = cfg.withDefaults()
	bound := cfg.Bound
	if bound <= 0 {
		bound = max(time.Duration(cfg.Factor*float64(steady)), cfg.Floor)
	}
	return &Window{cfg: cfg, size: min(1, cfg.Max), slowStart: true, threshold: cfg.Max, bound: bound, changed: make(chan struct{})}
}

// Size returns the window's size now.
func (w *Window) Size() float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.size
}

// Watch returns the window's size now and a channel closed once it
// changes: work the window holds back waits on it, where it looked at the
// size every few milliseconds (a mover's workers held back woke a
// hundred times a second each, for as long as the window stayed shut).
func (w *Window) Watch() (float64, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.size, w.changed
}

// Bound returns the p99 the window keeps the clients under.
func (w *Window) Bound() time.Duration { return w.bound }

// Peak returns the highest p99 of an interval the window looked at, and
// how many times it halved.
func (w *Window) Peak() (time.Duration, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.peak, w.decreases
}

// Look sets the window from one interval's p99, or from none (ok false:
// too few requests to tell), and returns the new size.
func (w *Window) Look(p99 time.Duration, ok bool) float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	was := w.size
	if ok && p99 > w.peak {
		w.peak = p99
	}
	switch {
	case ok && p99 > w.bound:
		w.threshold = max(w.size, w.cfg.Min)
		w.size = max(w.size/2, w.cfg.Min)
		w.slowStart = false
		w.decreases++
	case w.slowStart:
		w.size = min(w.size*2, w.cfg.Max)
	default:
		w.size = min(w.size+w.threshold/8, w.cfg.Max)
	}
	if w.size != was {
		close(w.changed)
		w.changed = make(chan struct{})
	}
	return w.size
}

// Run looks at h every interval until ctx ends (see [Window.tick]).
func (w *Window) Run(ctx context.Context, h *Histogram) {
	t := time.NewTicker(w.cfg.Interval)
	defer t.Stop()
	l := &looks{last: h.Snapshot()}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.tick(l, h.Snapshot())
	}
}

// looks is what Run keeps between two ticks: the counts at the last
// look, how many intervals have passed since, and the counts of the
// intervals looked at since the window last halved, the last spanned of
// them.
type looks struct {
	last   Counts
	waited int
	span   []Counts
}

// spanned is how many looks' requests the p99 is taken over: a second's.
const spanned = 10

// tick is one interval's look, now being the histogram's counts at its
// end, once Samples requests have come since the last look (or ten
// intervals have passed). The p99 it sets the window from is not that of
// the interval alone but of the requests since the window last halved,
// up to a second's: a p99 is "one request in a hundred over it", and a
// busy machine's wait for a core holds every client at once now and then
// - an interval of a tenth of a second with such a wait in it has its
// p99 over a bound of twice the steady p99 where the requests of the
// second around it do not (on the 2-core test machine at a load of 18-25
// the window halved 133 times in a move of 35 s, the mover running a
// sliver of the time; over a second's requests, 5 times in 3 s). The
// count starts again at each halving, so that one slow spell halves the
// window once, as TCP halves its window once a window of data.
func (w *Window) tick(l *looks, now Counts) {
	d := now.Sub(l.last)
	l.waited++
	if n := d.Total(); n < w.cfg.Samples && l.waited < 10 {
		return
	}
	l.last, l.waited = now, 0
	if len(l.span) == spanned {
		l.span = append(l.span[:0], l.span[1:]...)
	}
	l.span = append(l.span, d)
	var sum Counts
	for _, c := range l.span {
		sum = sum.Add(c)
	}
	n := sum.Total()
	w.mu.Lock()
	halved := w.decreases
	w.mu.Unlock()
	w.Look(sum.Quantile(0.99), n >= w.cfg.Samples)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.decreases != halved {
		l.span = l.span[:0]
	}
}
