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
}

// sourceStats are the mover's figures of one old server: held is how
// many keys it held when the mover began, found how many of those listed
// were to move, and onRequest how many requests moved from it; share is
// the part of its keys the change moves, by the placements, in parts per
// million (-1 until known), which estimates its keys to move before the
// mover has listed any.
type sourceStats struct {
	scanned, moved, held, found, onRequest, share atomic.Int64
	done                                          atomic.Bool
	// pace is the keys a second that leave it lately.
	pace movePace
	// gone are keys a MIGRATE took off it.
	gone goneKeys
}

// movePace is how fast a server's keys move lately: the keys moved over
// the last two seconds or so, counted at marks at least a quarter of a second
// apart, so that the estimate of the time left follows the pace the
// clients' latency sets now rather than the average since the start, and
// no batch's arrival swings it.
type movePace struct {
	// mu guards marks.
	mu    sync.Mutex
	marks []paceMark
}

// paceMark is the keys moved in all at a moment.
type paceMark struct {
	at    time.Time
	total int64
}

// paceMarks is how many marks a pace keeps: eight spans of a quarter of
// a second.
const paceMarks = 9

// note counts the keys moved so far, total, at now.
func (mp *movePace) note(now time.Time, total int64) {
	mp.mu.Lock()
	defer mp.mu.Unlock()
	if n := len(mp.marks); n > 0 && now.Sub(mp.marks[n-1].at) < 250*time.Millisecond {
		return
	}
	if len(mp.marks) == paceMarks {
		mp.marks = append(mp.marks[:0], mp.marks[1:]...)
	}
	mp.marks = append(mp.marks, paceMark{now, total})
}

// rate returns the keys a second moved from the oldest mark to now, when
// total had moved in all; 0 before a tenth of a second has passed.
func (mp *movePace) rate(now time.Time, total int64) float64 {
	mp.mu.Lock()
	defer mp.mu.Unlock()
	if len(mp.marks) == 0 {
		return 0
	}
	first := mp.marks[0]
	span := now.Sub(first.at)
	if span < 100*time.Millisecond {
		return 0
	}
	return float64(total-first.total) / span.Seconds()
}

// moveEstimate returns the keys m moves, estimated server by server,
// and the seconds left; -1 while unknown. Of each old server's keys held
// when the mover began, the mover has listed some (and found which of
// those move), requests have moved some before it came to them, and the
// rest it has yet to list: they move in the share the placements give
// that server (sampled when the mover began), weighed against the share
// found so far as the keys listed outnumber the sample; what is left to
// move goes at the pace its keys left it over the last second. The move
// ends with its slowest server: the servers move at once, each at its
// own pace (one that gives all its keys away moves them at what its
// MIGRATEs allow, one that keeps most of them lists them as fast as SCAN
// goes).
func moveEstimate(m *storeMove) (toMove int64, eta float64) {
	return moveEstimateAt(m, time.Now())
}

// shareWeight is how many keys listed the placements' share of a server
// counts as, against the share the mover found among those it listed.
const shareWeight = 200

func moveEstimateAt(m *storeMove, now time.Time) (toMove int64, eta float64) {
	eta = -1
	opened := m.stats.opened.Load()
	elapsed := 0.0
	if opened > 0 {
		elapsed = now.Sub(time.Unix(0, opened)).Seconds()
	}
	known := elapsed > 0
	m.stats.bySource.Range(func(_, v any) bool {
		ss := v.(*sourceStats)
		scanned, found, held, byRequests, share := ss.scanned.Load(), ss.found.Load(), ss.held.Load(), ss.onRequest.Load(), ss.share.Load()
		if ss.done.Load() {
			toMove += found + byRequests
			return true
		}
		// share is -1 while the placements' share is unknown.
		var s float64
		switch {
		case share >= 0:
			s = (float64(found) + float64(share)/1e6*shareWeight) / float64(scanned+shareWeight)
		case scanned > 0:
			s = float64(found) / float64(scanned)
		default:
			known = false
			return true
		}
		unlisted := max(held-scanned-byRequests, 0)
		mine := found + byRequests + int64(float64(unlisted)*s+0.5)
		toMove += mine
		moved := ss.moved.Load() + byRequests
		ss.pace.note(now, moved)
		left := max(mine-moved, 0)
		if left == 0 {
			eta = max(eta, 0)
			return true
		}
		rate := ss.pace.rate(now, moved)
		if rate == 0 && elapsed > 0 {
			rate = float64(moved) / elapsed
		}
		if rate <= 0 {
			known = false
			return true
		}
		eta = max(eta, float64(left)/rate)
		return true
	})
	switch {
	case !known:
		eta = -1
	case eta < 0:
		eta = 0
	}
	return toMove, eta
}
