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
// were to move, and onRequest how many requests moved from it.
type sourceStats struct {
	scanned, moved, held, found, onRequest atomic.Int64
	done                                   atomic.Bool
	// pace is the keys a second the mover lists them at lately.
	pace listPace
}

// listPace is how fast the mover lists a server's keys lately: a moving
// average over spans of at least a quarter of a second, so that the
// estimate of the time left follows the pace the clients' latency sets
// now rather than the average since the start.
type listPace struct {
	// mu guards the fields.
	mu         sync.Mutex
	mark       time.Time
	markListed int64
	perSecond  float64
}

// listed counts the keys listed so far, total.
func (lp *listPace) listed(total int64) {
	now := time.Now()
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if lp.mark.IsZero() {
		lp.mark, lp.markListed = now, total
		return
	}
	span := now.Sub(lp.mark)
	if span < 250*time.Millisecond {
		return
	}
	r := float64(total-lp.markListed) / span.Seconds()
	if lp.perSecond == 0 {
		lp.perSecond = r
	} else {
		lp.perSecond = (lp.perSecond + r) / 2
	}
	lp.mark, lp.markListed = now, total
}

// rate returns the keys a second listed lately, 0 before a span ended.
func (lp *listPace) rate() float64 {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	return lp.perSecond
}

// sourceDone reports whether the mover has been through the old server
// at addr.
func (m *storeMove) sourceDone(addr string) bool {
	v, ok := m.stats.bySource.Load(addr)
	return ok && v.(*sourceStats).done.Load()
}

// source returns the figures of the old server at addr.
func (st *moveStats) source(addr string) *sourceStats {
	v, _ := st.bySource.LoadOrStore(addr, new(sourceStats))
	return v.(*sourceStats)
}

// moveSummary is a store's last move, kept after it ended until the
// next: when it ended, the keys and bytes it moved, how long it took,
// and the clients' p99 before it, at its worst interval meanwhile, the
// bound the mover kept it under and how many times it slowed down.
type moveSummary struct {
	ended               time.Time
	keys, bytes         int64
	took                time.Duration
	steady, peak, bound time.Duration
	slowed              int
}
