package proxy

import (
	"sync"
	"sync/atomic"
	"time"
)

// A store's move's figures, for the status, the metrics and the
// estimates of what is left (see moveEstimate).

// moveStats are a move's figures, for the status and the metrics.
type moveStats struct {
	// scanned and moved count the keys the mover listed and moved;
	// onRequest the keys requests moved; failed the MIGRATEs that failed.
	scanned, moved, onRequest, failed atomic.Int64
	// bytes is the size of the mover's keys moved, estimated from the
	// MEMORY USAGE of a sample of them.
	bytes atomic.Int64
	// sources is how many old servers the mover goes through, and
	// finished how many it has been through.
	sources, finished atomic.Int64
	// held is how many keys the old servers held when the mover began,
	// and found how many of those it listed were to move: held times
	// the share found is the estimate of the keys to move.
	held, found atomic.Int64
	// opened is when the move opened, in Unix nanoseconds; 0 before.
	opened atomic.Int64
	// predicted is how long the mover was predicted to take when it
	// began, in nanoseconds: the keys each old server has to move at the
	// pace the pool's last move measured; 0 when none did.
	predicted atomic.Int64
	// bySource are the mover's figures of each old server, by address.
	bySource sync.Map // string -> *sourceStats
	// lastErr says why the last MIGRATE failed, while the mover retries.
	lastErr atomic.Pointer[string]
	// outsideHours is set while the mover waits for store.hours.
	outsideHours atomic.Bool
	// waiting says why the move is not open yet, while it is not.
	waiting atomic.Pointer[string]
	// idleMu guards idle, the spans the move stood still (paused, or
	// outside store.hours), the last open-ended while it stands still.
	idleMu sync.Mutex
	idle   []idleSpan
}

// idleSpan is a time the move stood still; to is zero while it still
// does.
type idleSpan struct{ from, to time.Time }

// sourceStats are the mover's figures of one old server: held is how
// many keys it held when the mover began, found how many of those listed
// were to move, and onRequest how many requests moved from it; share is
// the part of its keys the change moves, by the placements, in parts per
// million (-1 until known), which estimates its keys to move before the
// mover has listed any.
type sourceStats struct {
	scanned, moved, held, found, onRequest, share atomic.Int64
	done                                          atomic.Bool
	// pace is how fast its keys leave it.
	pace movePace
	// gone are keys a MIGRATE took off it.
	gone goneKeys
}

// standStill notes whether the move stands still now, paused or outside
// store.hours, and returns on: the time it stands still is left out of
// its pace (see movePace.rate).
func (st *moveStats) standStill(now time.Time, on bool) bool {
	st.idleMu.Lock()
	defer st.idleMu.Unlock()
	n := len(st.idle)
	still := n > 0 && st.idle[n-1].to.IsZero()
	switch {
	case on && !still:
		st.idle = append(st.idle, idleSpan{from: now})
	case !on && still:
		st.idle[n-1].to = now
	}
	return on
}

// active returns the time from since to now that the move did not stand
// still.
func (st *moveStats) active(since, now time.Time) time.Duration {
	st.idleMu.Lock()
	defer st.idleMu.Unlock()
	d := now.Sub(since)
	for _, sp := range st.idle {
		to := sp.to
		if to.IsZero() || to.After(now) {
			to = now
		}
		if from := later(sp.from, since); to.After(from) {
			d -= to.Sub(from)
		}
	}
	return d
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// movePace is how fast a server's keys leave it: marks of the keys moved
// in all, from the mover's beginning on the server on, a spacing apart
// that doubles, dropping every other mark, each time paceMarks are kept,
// so that the marks span the whole move at a sixty-fourth of it.
type movePace struct {
	// mu guards marks and spacing.
	mu      sync.Mutex
	marks   []paceMark
	spacing time.Duration
}

// paceMark is the keys moved in all at a moment.
type paceMark struct {
	at    time.Time
	total int64
}

// paceMarks is how many marks a pace keeps at most, and paceFirst the
// spacing of its first ones.
const (
	paceMarks = 64
	paceFirst = 50 * time.Millisecond
)

// note counts the keys moved so far, total, at now; the first note is
// when the mover began on the server.
func (mp *movePace) note(now time.Time, total int64) {
	mp.mu.Lock()
	defer mp.mu.Unlock()
	if n := len(mp.marks); n > 0 && now.Sub(mp.marks[n-1].at) < mp.spacing {
		return
	}
	if len(mp.marks) == paceMarks {
		kept := mp.marks[:0]
		for i := 0; i < len(mp.marks); i += 2 {
			kept = append(kept, mp.marks[i])
		}
		mp.marks = kept
		mp.spacing *= 2
	}
	mp.spacing = max(mp.spacing, paceFirst)
	mp.marks = append(mp.marks, paceMark{now, total})
}

// paceSpan is the shortest time a pace is taken over once the mover has
// moved for that long: a move of up to twice that goes at its average
// since the mover began, which under a ceiling (store.rate) holds within
// a few percent; over 1 s (the mover's window halves and grows again in
// about a second: see proxy/internal/pace) the estimates under a ceiling
// on a loaded machine were 50-78% off at a quarter and three quarters of
// a move of 12 s, the machine's swings followed.
const paceSpan = 5 * time.Second

// rate returns the keys a second moved from the mark half the move's
// active time back (paceSpan at least, or the first mark) to now, when
// total had moved in all, and how long since the mover began on the
// server, the time the move stood still left out (st.active); 0 with no
// mark. Over the second half of the move rather than all of it, so that
// a pace that rises or falls as the move goes (the clients' requests for
// the keys not moved yet, slower, weigh on the window less as fewer are
// left) is followed within half the time it took.
func (mp *movePace) rate(st *moveStats, now time.Time, total int64) (float64, time.Duration) {
	mp.mu.Lock()
	defer mp.mu.Unlock()
	if len(mp.marks) == 0 {
		return 0, 0
	}
	began := st.active(mp.marks[0].at, now)
	from := mp.marks[0]
	for _, mk := range mp.marks[1:] {
		if d := st.active(mk.at, now); d < max(began/2, paceSpan) {
			break
		}
		from = mk
	}
	span := st.active(from.at, now)
	if span <= 0 {
		return 0, began
	}
	return float64(total-from.total) / span.Seconds(), began
}

// moveEstimate returns the keys m moves, estimated server by server,
// and the seconds left; -1 while unknown (see moveEstimateAt).
func moveEstimate(m *storeMove) (toMove int64, eta float64) {
	return moveEstimateAt(m, time.Now())
}

// moveEstimateAt returns the keys m moves and the seconds left at now.
// Of each old server's keys held when the mover began (DBSIZE), the mover
// has listed some (and found which of those move), requests have moved
// some before it came to them, and the rest it has yet to list: they move
// in the share the placements give that server, weighed against the share
// found so far as the keys listed outnumber the sample (see toMove). What
// is left to move goes at the pace of the later half of the time the
// server's keys have moved (see movePace.rate), the time the move stood
// still left out: the pace over the last two seconds, as before, followed
// the mover's window (halved and grown again by the clients' latency),
// which changed it 3 to 10 times within a move at full speed, and the
// eta with it. The move ends with its slowest server: the servers move at
// once, each at its own pace. The eta is unknown (-1) until each server
// still moving has moved for etaAfterTime and a share etaAfterKeys of its
// keys: before that, the mover's first batches, slow start and all, are
// too few to set a pace by.
func moveEstimateAt(m *storeMove, now time.Time) (toMove int64, eta float64) {
	known := m.stats.opened.Load() > 0
	m.stats.bySource.Range(func(_, v any) bool {
		ss := v.(*sourceStats)
		mine, ok := ss.toMove()
		toMove += mine
		if ss.done.Load() {
			return true
		}
		var secs float64
		if ok {
			secs, ok = ss.timeLeft(&m.stats, mine, now)
		}
		known = known && ok
		eta = max(eta, secs)
		return true
	})
	if !known {
		eta = -1
	}
	return toMove, eta
}

// shareWeight is how many keys listed the placements' share of a server
// counts as, against the share the mover found among those it listed.
const shareWeight = 200

// toMove returns the keys the server moves, estimated: those found to
// move among the keys listed, those requests moved, and the placements'
// share of those not listed yet (see moveEstimateAt); false while unknown.
func (ss *sourceStats) toMove() (int64, bool) {
	scanned, found, held, byRequests, share := ss.scanned.Load(), ss.found.Load(), ss.held.Load(), ss.onRequest.Load(), ss.share.Load()
	if ss.done.Load() {
		return found + byRequests, true
	}
	// share is -1 while the placements' share is unknown.
	var s float64
	switch {
	case share >= 0:
		s = (float64(found) + float64(share)/1e6*shareWeight) / float64(scanned+shareWeight)
	case scanned > 0:
		s = float64(found) / float64(scanned)
	default:
		return 0, false
	}
	unlisted := max(held-scanned-byRequests, 0)
	return found + byRequests + int64(float64(unlisted)*s+0.5), true
}

// etaAfterTime and etaAfterKeys are how long a server's keys must have
// moved, and what share of them, before its pace sets an eta.
const (
	etaAfterTime = 200 * time.Millisecond
	etaAfterKeys = 0.1
)

// timeLeft returns the seconds the server's keys left to move take at
// its pace, of mine to move in all; false while unknown.
func (ss *sourceStats) timeLeft(st *moveStats, mine int64, now time.Time) (float64, bool) {
	total := ss.moved.Load() + ss.onRequest.Load()
	left := mine - total
	if left <= 0 {
		return 0, true
	}
	rate, began := ss.pace.rate(st, now, total)
	if rate <= 0 || began < etaAfterTime || float64(total) < etaAfterKeys*float64(mine) {
		return 0, false
	}
	return float64(left) / rate, true
}
