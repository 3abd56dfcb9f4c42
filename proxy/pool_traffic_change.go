package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/sim/plan"
	"github.com/kolco-dev/kolco/sim/trace"
)

// When a pool with a traffic sample applies a change of its servers, it
// predicts the change's cost from the sample as `kolco plan --trace`
// would from the sample's trace (sim/plan, on the placements before and
// after), and measures the same figures for a window after: the reads
// that missed, the servers' requests, the keys a warm change copied. Both
// are reported side by side (TrafficChange), so that an operator sees how
// far the plan can be trusted on the pool's own traffic.
//
// The window is the setting traffic.window, cut to the trace's span: the
// plan does not look past what the trace holds (sim/plan). The misses the
// change adds are the misses measured in the window less those the reads
// would have missed anyway, at the miss ratio the trace shows for the
// same span before the change.

// TrafficChange is a change of a pool's servers as its traffic sample
// predicted it, and as the pool measured it in the window after.
type TrafficChange struct {
	// At is when the change was applied; Window how long after it the
	// figures count; Done is set once the window has passed and
	// Measured holds its figures; Warm says whether the change was
	// applied warm.
	At     time.Time     `json:"at"`
	Window time.Duration `json:"window_ns"`
	Done   bool          `json:"done"`
	Warm   bool          `json:"warm"`
	// Servers are the servers before and after.
	ServersBefore int `json:"servers_before"`
	ServersAfter  int `json:"servers_after"`
	// Predicted is what the sample predicted, nil when it could not (the
	// reason in Error); Measured what the window measured.
	Predicted *ChangeFigures `json:"predicted,omitempty"`
	Measured  *ChangeFigures `json:"measured,omitempty"`
	Error     string         `json:"error,omitempty"`
}

// ChangeFigures are what a change costs over its window.
type ChangeFigures struct {
	// MovedReads is the share of the reads whose key changes server:
	// predicted from the trace before the change, measured on the
	// trace's reads in the window. (Reads, not requests: a cache-aside
	// client's read that misses is followed by a write, which would count
	// a change's misses twice.)
	MovedReads float64 `json:"moved_reads_share"`
	// MovedKeys and MovedBytes are the keys the change gives another
	// server, and their keys' and values' bytes: predicted, those of the
	// trace's span for the whole key space (the trace's, over its key
	// share); measured, those the servers held when it was applied (see
	// pool_traffic_moved.go). MovedNote says why they are not measured,
	// or how they are estimated.
	MovedKeys  float64 `json:"moved_keys,omitempty"`
	MovedBytes float64 `json:"moved_bytes,omitempty"`
	MovedNote  string  `json:"moved_note,omitempty"`
	// CopiedKeys is, measured, the values a warm change copied to their
	// new servers in the window.
	CopiedKeys float64 `json:"copied_keys,omitempty"`
	// Reads and Misses are the reads in the window and those that missed
	// (measured; predicted: the reads at the trace's rate, and the
	// misses at its miss ratio plus those the change adds);
	// AddedMisses those the change adds: the reads of moved keys that
	// were cached before it, the misses that reach the database because
	// of it.
	Reads       float64 `json:"reads"`
	Misses      float64 `json:"misses"`
	AddedMisses float64 `json:"added_misses"`
	// PeakServer is the server with the most requests per second in the
	// window, PeakRPS its rate, and MeanRPS the servers' mean.
	PeakServer string  `json:"peak_server"`
	PeakRPS    float64 `json:"peak_rps"`
	MeanRPS    float64 `json:"mean_rps"`
}

// changeWatch is a change being measured: the pool's traffic sample, its
// servers and its windows' count of copies, which the window after the
// change is measured by, the placements before and after it, and the
// counts the window started from. Those are fixed once the change is
// applied; c fills in as the prediction and the window come in.
type changeWatch struct {
	t             *trafficSample
	backends      []*backend
	copies        *atomic.Uint64
	before, after *placement
	start         changeCounts

	mu sync.Mutex // guards c
	c  TrafficChange
}

func (w *changeWatch) status() TrafficChange {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.c
	return c
}

// takeTraffic gives p its traffic sample before it serves: the sample of
// old, the pool it replaces (nil for none), when p samples alike, so that
// a change is predicted from the traffic before it; else a new one, or
// none when the sample is off.
func (p *pool) takeTraffic(old *pool) {
	// The hot-key cache is the pool's own: its values were read under
	// the placement of the pool that read them.
	defer func() { p.hot = newHotCache(p) }()
	if old != nil && old.traffic != nil && old.traffic.cfg == p.cfg.WithDefaults().Traffic {
		p.traffic = old.traffic
		return
	}
	p.traffic = newTrafficSample(p.cfg)
}

// trafficChanged is called once p has replaced old: when they share a
// sample and place keys otherwise, the change is predicted from the
// sample and measured over the window after.
func (p *pool) trafficChanged(old *pool) {
	t := p.traffic
	if t == nil || old.traffic != t {
		return
	}
	before, after := old.place.Load().configured(), p.place.Load().configured()
	if before.sig == after.sig {
		return
	}
	reqs := t.requests()
	window := t.cfg.window()
	if len(reqs) > 1 {
		window = min(window, time.Duration(reqs[len(reqs)-1].Time-reqs[0].Time))
	}
	w := &changeWatch{t: t, backends: p.backends, copies: &p.mig.stats.copies, before: before, after: after,
		c: TrafficChange{At: time.Now(), Window: window, Warm: p.cfg.Warm.on(), ServersBefore: len(before.servers), ServersAfter: len(after.servers)}}
	w.start = w.count()
	t.change.Store(w)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		pred, err := predictChange(reqs, before, after, window, t.cfg.KeyShare, w.c.Warm)
		w.mu.Lock()
		if err != nil {
			w.c.Error = err.Error()
		} else {
			w.c.Predicted = pred
		}
		w.mu.Unlock()
	}()
	// The servers are listed from the change on, within its window.
	listed := make(chan movedCount, 1)
	ctx, cancel := context.WithTimeout(p.ctx, window)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer cancel()
		if p.cfg.Store.Enabled {
			listed <- movedCount{note: "a store's keys are moved by its mover: see the pool's move"}
			return
		}
		listed <- countMoved(ctx, p.front, before, after)
	}()
	time.AfterFunc(window, func() {
		m := w.measure()
		mc := <-listed
		m.MovedKeys, m.MovedBytes, m.MovedNote = mc.keys, mc.bytes, mc.note
		w.mu.Lock()
		w.c.Measured, w.c.Done = m, true
		w.mu.Unlock()
	})
}

// changeCounts are the pool's counters when a change's window opened.
type changeCounts struct {
	reads, misses, copies uint64
	servers               []uint64
	baseline              float64 // the trace's miss ratio over the window's span before
}

// count reads the counters the change's window starts from.
func (w *changeWatch) count() changeCounts {
	t := w.t
	c := changeCounts{reads: t.reads.Load(), misses: t.misses.Load(), copies: w.copies.Load()}
	for _, b := range w.backends {
		c.servers = append(c.servers, b.stats.responses.Load()+b.stats.errors.Load())
	}
	return c
}

// measure returns what the window after the change measured, once it
// has passed.
func (w *changeWatch) measure() *ChangeFigures {
	t, start, at, window, before, after := w.t, w.start, w.c.At, w.c.Window, w.before, w.after
	secs := window.Seconds()
	m := &ChangeFigures{Reads: float64(t.reads.Load() - start.reads), Misses: float64(t.misses.Load() - start.misses),
		CopiedKeys: float64(w.copies.Load() - start.copies)}
	var total float64
	for i, b := range w.backends {
		rps := float64(b.stats.responses.Load()+b.stats.errors.Load()-start.servers[i]) / secs
		total += rps
		if rps > m.PeakRPS {
			m.PeakServer, m.PeakRPS = b.name(), rps
		}
	}
	m.MeanRPS = total / float64(len(w.backends))
	from, to := at.UnixNano(), at.Add(window).UnixNano()
	// A read in the window that missed a moved key held before the change
	// is a miss the change added: the key was cached at its old server.
	held := map[string]bool{}
	var moved, reads, added float64
	for _, r := range t.requests() {
		switch {
		case r.Time < from:
			held[r.Key] = true
		case r.Time < to && r.Op == trace.Read:
			reads++
			if before.owner([]byte(r.Key)) == after.owner([]byte(r.Key)) {
				continue
			}
			moved++
			if r.Result == trace.Miss && held[r.Key] {
				added++
			}
		}
	}
	if reads > 0 {
		m.MovedReads = moved / reads
	}
	m.AddedMisses = added / t.cfg.KeyShare
	return m
}

// owner returns the name of the server that owns key under pl.
func (pl *placement) owner(key []byte) string {
	return pl.servers[pl.pick.Index(key)].name()
}

// predictChange predicts what the change from before to after costs in
// the window, from the trace's requests of a share of the keys, as kolco
// plan does from a trace.
func predictChange(reqs []trace.Request, before, after *placement, window time.Duration, share float64, warm bool) (*ChangeFigures, error) {
	prof, err := trace.Summarize(&requestList{reqs: reqs}, trace.Options{})
	if err != nil {
		return nil, fmt.Errorf("the sample: %w", err)
	}
	if prof.Seconds() <= 0 {
		return nil, errors.New("the sample spans no time yet")
	}
	win := min(window.Seconds(), prof.Seconds())
	res, err := plan.Compute(plan.Config{Label: "pool", Before: placedBy(before), After: placedBy(after), Warm: warm,
		Traffic: &plan.Traffic{Profile: prof, Window: win}, HitRate: 1})
	if err != nil {
		return nil, err
	}
	tr := res.Traffic
	f := &ChangeFigures{MovedReads: movedReads(prof, before, after), MovedKeys: float64(res.Moved) / share, MovedBytes: res.MovedBytes / share,
		Reads: tr.ReadRPS * win / share}
	if n := len(tr.Misses); n > 0 {
		f.AddedMisses = tr.Misses[n-1].Misses / share
	}
	f.Misses = f.Reads*tr.MissRatio + f.AddedMisses
	var total float64
	for _, n := range tr.Nodes {
		if n.RPSAfter/share > f.PeakRPS {
			f.PeakServer, f.PeakRPS = n.Node, n.RPSAfter/share
		}
		total += n.RPSAfter / share
	}
	f.MeanRPS = total / float64(len(after.servers))
	return f, nil
}

// movedReads returns the share of the profile's reads whose key changes
// server.
func movedReads(prof *trace.Profile, before, after *placement) float64 {
	var moved float64
	for _, k := range prof.Keys {
		if before.owner([]byte(k.Key)) != after.owner([]byte(k.Key)) {
			moved += float64(k.Reads)
		}
	}
	if prof.Reads == 0 {
		return 0
	}
	return moved / float64(prof.Reads)
}

// requestList reads a list of requests as a trace.
type requestList struct {
	reqs []trace.Request
	next int
}

func (l *requestList) Next() (trace.Request, error) {
	if l.next == len(l.reqs) {
		return trace.Request{}, io.EOF
	}
	l.next++
	return l.reqs[l.next-1], nil
}

func (l *requestList) Stats() trace.Stats { return trace.Stats{} }

// placed is a pool's placement as a kolco.Placement for a plan: its
// servers are nodes named as the servers are.
type placed struct {
	pl    *placement
	nodes []kolco.Node
	index []int // the node of each of pl.servers
}

func placedBy(pl *placement) *placed {
	p := &placed{pl: pl}
	for i, b := range pl.servers {
		p.nodes = append(p.nodes, kolco.Node{ID: b.name(), Weight: b.node.Weight, Addr: b.addr})
		p.index = append(p.index, i)
	}
	return p
}

func (p *placed) Locate(key string) (*kolco.Node, error) {
	if len(p.nodes) == 0 {
		return nil, kolco.ErrNoNodes
	}
	return &p.nodes[p.index[p.pl.pick.Index([]byte(key))]], nil
}

func (p *placed) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	if n < 1 {
		return dst, kolco.ErrBadCount
	}
	nd, err := p.Locate(key)
	if err != nil {
		return dst, err
	}
	return append(dst, *nd), nil
}

func (p *placed) Nodes() []kolco.Node {
	out := append([]kolco.Node(nil), p.nodes...)
	slices.SortFunc(out, func(a, b kolco.Node) int { return strings.Compare(a.ID, b.ID) })
	return out
}
