package proxy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kolco-dev/kolco/proxy/internal/pace"
)

// The mover: the part of a store's move that does not wait for requests.
// It goes through the servers of the placements a move follows, every
// one at once, and sends each key that changed owner to its new server.
// redisFront.moveFrom moves a server's keys (pipelined SCAN and MIGRATE
// on pooled connections, see redis_store_scan.go and
// proxy/internal/mover); the mover decides, through a moveJob, where each
// key goes, how many batches run at once, and when the move stops. How many run at once is
// a window set from the clients' own latency (proxy/internal/pace): it
// halves when their p99 passes the bound (Store.LatencyBound, by default
// twice the p99 before the move) and grows while it stays under, as a
// congestion window does; Store.Rate, when set, is a ceiling of keys a
// second from each server.

// moveConns is how many MIGRATEs run at once from one server at most,
// the window's largest size: a Redis server has one core, and past a few
// MIGRATEs more only queue behind each other.
const moveConns = 4

// run goes through every server of m's placements at once and moves each
// key it holds that the placement puts elsewhere. It reports whether it
// went through all of them; false when the pool closes or m is replaced.
func (mv *storeMover) run(m *storeMove) bool {
	var sources []*backend
	for _, v := range m.priors {
		for _, b := range v.pl.servers {
			if !slices.ContainsFunc(sources, func(s *backend) bool { return s.addr == b.addr }) {
				sources = append(sources, b)
			}
		}
	}
	m.stats.sources.Store(int64(len(sources)))
	m.stats.finished.Store(0)
	shares := moveShares(mv.place.Load(), m, sources)
	for i, b := range sources {
		ss := m.stats.source(b.addr)
		ss.share.Store(shares[i])
		if n, err := mv.front.items(mv.moveCtx, b); err == nil {
			m.stats.held.Add(n)
			ss.held.Store(n)
		}
		ss.pace.note(time.Now(), ss.moved.Load()+ss.onRequest.Load())
	}
	m.stats.predicted.Store(int64(predictMove(mv.mig.lastMove.Load(), m, sources, shares)))
	if m.instances == nil {
		m.instances = instancesOf(mv.moveCtx, mv.front, append(slices.Clone(sources), mv.place.Load().servers...))
	}
	window := pace.NewWindow(pace.Config{Bound: time.Duration(mv.cfg.Store.LatencyBound) * time.Millisecond, Max: moveConns}, m.steady)
	m.window.Store(window)
	hours, _ := parseHours(mv.cfg.Store.Hours) // checked with the configuration
	ctx, stop := context.WithCancel(mv.moveCtx)
	defer stop()
	go window.Run(ctx, &mv.mig.clientLatency)
	var wg sync.WaitGroup
	var all atomic.Bool
	all.Store(true)
	for _, src := range sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			job := &moveJob{mv: mv, m: m, src: src, window: window, limit: newRate(mv.cfg.Store.Rate), ss: m.stats.source(src.addr), hours: hours}
			// Paused or outside its hours, the mover lists nothing
			// either: its SCAN ran ahead of the workers held, a few
			// batches of keys a source, and more as the window opened.
			if job.idle(mv.moveCtx) != nil || (redisFront{}).moveFrom(mv.moveCtx, src, job) != nil || moveOf(mv.place.Load()) != m {
				all.Store(false)
				return
			}
			m.stats.finished.Add(1)
			job.ss.done.Store(true)
		}()
	}
	wg.Wait()
	if !all.Load() || moveOf(mv.place.Load()) != m {
		return false
	}
	m.restarted = restartedSince(mv.moveCtx, mv.front, m)
	return true
}

// serverInstance is a server of a move and the process it ran when the
// mover began.
type serverInstance struct {
	b  *backend
	id string
}

// instancesOf returns the process each of servers runs, by address; a
// server that does not answer is left out.
func instancesOf(ctx context.Context, f front, servers []*backend) map[string]serverInstance {
	out := map[string]serverInstance{}
	for _, b := range servers {
		if _, ok := out[b.addr]; ok {
			continue
		}
		if id, err := f.instance(ctx, b); err == nil {
			out[b.addr] = serverInstance{b, id}
		}
	}
	return out
}

// restartedSince returns the servers of m that run another process than
// when the mover began: a server started again without the keys it held
// (no persistence, or its files lost) came back empty, and the keys it
// held as a source, or had received as a target, are gone with it; the
// mover, finding nothing there, cannot tell. Each with the keys it held
// when the mover began (0 for a server that was only a target) and those
// it holds now.
func restartedSince(ctx context.Context, f front, m *storeMove) []RestartedServer {
	var out []RestartedServer
	for addr, si := range m.instances {
		id, err := f.instance(ctx, si.b)
		if err != nil || id == si.id {
			continue
		}
		rs := RestartedServer{Addr: addr, Holds: -1}
		if v, ok := m.stats.bySource.Load(addr); ok {
			rs.Held = v.(*sourceStats).held.Load()
		}
		if n, err := f.items(ctx, si.b); err == nil {
			rs.Holds = n
		}
		out = append(out, rs)
	}
	slices.SortFunc(out, func(a, b RestartedServer) int { return strings.Compare(a.Addr, b.Addr) })
	return out
}

// shareSample is how many made-up keys moveShares places: a few thousand
// for each of a few servers, which gives each server's share within a few
// percent.
const shareSample = 16384

// moveShares returns, for each of sources, the part of its keys m moves,
// in parts per million, from keys made up for it: of the keys a
// placement m follows puts on the server (or the newest placement does),
// those the newest puts elsewhere.
func moveShares(pl *placement, m *storeMove, sources []*backend) []int64 {
	var sc routeScratch
	on := make([]int64, len(sources))
	off := make([]int64, len(sources))
	key := make([]byte, 0, 32)
	for i := range shareSample {
		key = strconv.AppendInt(append(key[:0], "kolco:share:"...), int64(i), 10)
		owners := pl.route(key, false, &sc)
		if len(owners) == 0 {
			continue
		}
		now := owners[0].addr
		for j, b := range sources {
			held := b.addr == now
			for _, v := range m.priors {
				if o := v.owner(key, &sc); o != nil && o.addr == b.addr {
					held = true
				}
			}
			if held {
				on[j]++
				if b.addr != now {
					off[j]++
				}
			}
		}
	}
	shares := make([]int64, len(sources))
	for j := range sources {
		shares[j] = -1
		if on[j] > 0 {
			shares[j] = off[j] * 1_000_000 / on[j]
		}
	}
	return shares
}

// predictMove returns how long m's mover takes at the pace of the pool's
// last move, last (its busiest server's keys a second): the keys the busiest of
// sources has to move, by what each holds and the placements' share of
// them, at that pace; 0 when no move before measured one. kolco plan
// predicts a move so, from the keys it lists.
func predictMove(last *moveSummary, m *storeMove, sources []*backend, shares []int64) time.Duration {
	if last == nil || last.serverRate <= 0 {
		return 0
	}
	most := 0.0
	for i, b := range sources {
		if shares[i] > 0 {
			most = max(most, float64(m.stats.source(b.addr).held.Load())*float64(shares[i])/1e6)
		}
	}
	return time.Duration(most / last.serverRate * float64(time.Second))
}

// errMoveReplaced stops a mover whose move a change replaced, or whose
// pool closes.
var errMoveReplaced = errors.New("the move was replaced by another, or its pool closes")

// moveJob is the engine's side of the move of one old server's keys: the
// front asks it where each key goes, waits on it before each batch, and
// tells it what moved.
type moveJob struct {
	mv     *storeMover
	m      *storeMove
	src    *backend
	window *pace.Window
	ss     *sourceStats
	hours  moveHours
	sc     routeScratch // dest's, which one goroutine calls
	// mu guards limit and rest.
	mu    sync.Mutex
	limit *rate
	// reserve is the keys of a batch that wait takes of the rate's room
	// before it goes, under a ceiling: the most a batch takes.
	reserve int
	// rest is when the window, below one batch at a time, lets the next
	// batch go.
	rest time.Time
}

// dest returns the server key goes to, or nil when it stays on src.
func (j *moveJob) dest(key []byte) *backend {
	pl := j.mv.place.Load()
	if moveOf(pl) != j.m {
		return nil // replaced: wait stops the move
	}
	owners := pl.route(key, false, &j.sc)
	if len(owners) == 0 || owners[0].addr == j.src.addr {
		return nil
	}
	to := owners[0]
	if !j.m.placedOn(key, j.src, &j.sc) {
		return nil // a late write's copy: see placedOn
	}
	j.m.stats.found.Add(1)
	j.ss.found.Add(1)
	return to
}

// slice is about how long one batch may hold its server: a quarter of
// the clients' latency bound, so that a request behind a batch or two
// stays within it, from 100 µs (under which a batch's own cost and round
// trip outweigh its keys) to 2 ms.
func (j *moveJob) slice() time.Duration {
	return min(max(j.window.Bound()/4, 100*time.Microsecond), 2*time.Millisecond)
}

// maxBatch returns the most keys a batch takes: store.batch (0: the
// mover's own bound), and under a ceiling (store.rate) a tenth of a
// second's keys at most, so that the keys move at an even pace, not in
// bursts of a second's keys with the rest between them. It sets what a
// batch reserves of the ceiling's room, and the room a late wake-up may
// take back: a quarter of a second's keys, and a batch's at least (on a
// machine at load 30 a sleep overran by a tenth of a second and more).
func (j *moveJob) maxBatch() int {
	st := j.mv.cfg.Store
	most := st.Batch
	if st.Rate > 0 {
		most = max(st.Rate/10, 1)
		if st.Batch > 0 {
			most = min(most, st.Batch)
		}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.reserve = most
	j.limit.slack = max(time.Duration(most)*j.limit.every, 250*time.Millisecond)
	return most
}

// admits reports whether the window lets worker+1 batches go at once;
// when it does not, it returns a channel closed once the window changes.
func (j *moveJob) admits(worker int) (bool, <-chan struct{}) {
	size, changed := j.window.Watch()
	return float64(worker) < math.Ceil(size), changed
}

// idle blocks while the move is paused or outside store.hours. It fails
// with errMoveReplaced.
func (j *moveJob) idle(ctx context.Context) error {
	for {
		if ctx.Err() != nil || moveOf(j.mv.place.Load()) != j.m {
			return errMoveReplaced
		}
		outside := !j.hours.contains(time.Now())
		j.m.stats.outsideHours.Store(outside)
		if !j.m.stats.standStill(time.Now(), j.m.paused.Load() || outside) {
			return nil
		}
		if !sleepCtx(ctx, idleLook) {
			return errMoveReplaced
		}
	}
}

// wait blocks until a worker may send its next batch: while the move is
// paused or outside store.hours (idle), and for the rest and the rate's
// room. It fails with errMoveReplaced.
func (j *moveJob) wait(ctx context.Context) error {
	for {
		if err := j.idle(ctx); err != nil {
			return err
		}
		j.mu.Lock()
		d := time.Until(j.rest)
		if n := j.limit.take(0); n > d {
			d = n
		}
		if d <= 0 {
			// The batch's room under the ceiling is taken now, so that
			// the workers let go together do not all send at once; moved
			// counts the keys it had beyond or short of it.
			j.limit.take(j.reserve)
		}
		j.mu.Unlock()
		if d <= 0 {
			return nil
		}
		if !sleepCtx(ctx, min(d, 10*time.Millisecond)) {
			return errMoveReplaced
		}
	}
}

// idleLook is how often a mover paused, or outside store.hours, looks
// again: a resume, the hours' start and a move that replaces its own are
// seen within it, and its pool's close at once. At 10 ms each old
// server's worker woke a hundred times a second to look at a flag and
// the clock, for hours on end outside store.hours.
const idleLook = 250 * time.Millisecond

// hold takes the roles of a MIGRATE from src to dst (see migrateRoles).
func (j *moveJob) hold(ctx context.Context, dst *backend) (func(), error) {
	roles := j.mv.roles
	if err := roles.acquire(ctx, time.Time{}, j.src.addr, dst.addr); err != nil {
		return nil, err
	}
	return func() { roles.release(j.src.addr, dst.addr) }, nil
}

// scanned counts n keys listed on src.
func (j *moveJob) scanned(n int) {
	j.m.stats.scanned.Add(int64(n))
	j.ss.scanned.Add(int64(n))
}

// moved counts a batch that took keys, about bytes, off the source to
// dst in took (see goneKeys); the rate's room and, below one batch at a
// time, the rest follow from it.
func (j *moveJob) moved(dst *backend, keys [][]byte, bytes int64, took time.Duration) {
	n := len(keys)
	j.ss.gone.add(keys...)
	j.m.stats.moved.Add(int64(n))
	j.ss.pace.note(time.Now(), j.ss.moved.Add(int64(n))+j.ss.onRequest.Load())
	j.m.stats.bytes.Add(bytes)
	j.mv.counted(int64(n))
	j.mu.Lock()
	defer j.mu.Unlock()
	j.limit.take(n - j.reserve)
	if size := j.window.Size(); size < 1 {
		j.rest = time.Now().Add(time.Duration(float64(took) * (1/size - 1)))
	}
}

// failed reports a SCAN (dst nil) or a MIGRATE that failed and is tried
// again.
func (j *moveJob) failed(dst *backend, err error) {
	line := fmt.Sprintf("SCAN %s: %v", j.src.addr, err)
	if dst != nil {
		j.m.stats.failed.Add(1)
		line = fmt.Sprintf("%s -> %s: %v", j.src.addr, dst.addr, err)
	}
	j.m.stats.lastErr.Store(&line)
	if ok, held := j.mv.moveLog.allow(); ok {
		j.mv.log.Warn("store move: a SCAN or MIGRATE failed; the keys stay on their old server and are tried again", "error", line, "not_logged", held)
	}
}

// rate spaces out a mover's keys to at most n a second; no limit when
// n is 0. Time it did not use, up to slack, it may use later: a sleep
// that overslept (on a busy machine, by tens of milliseconds) would
// otherwise lose its overshoot at every batch, and the mover go well
// under its ceiling.
type rate struct {
	every time.Duration
	next  time.Time
	slack time.Duration
}

func newRate(perSecond int) *rate {
	if perSecond <= 0 {
		return &rate{}
	}
	return &rate{every: time.Second / time.Duration(perSecond)}
}

// take returns how long to wait before n more keys, and counts them.
func (r *rate) take(n int) time.Duration {
	now := time.Now()
	if r.next.IsZero() {
		r.next = now // no room before the first keys
	}
	if r.next.Before(now.Add(-r.slack)) {
		r.next = now.Add(-r.slack)
	}
	wait := max(r.next.Sub(now), 0)
	r.next = r.next.Add(time.Duration(n) * r.every)
	return wait
}

// sleepCtx sleeps for d; it reports false when ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
