package proxy

import (
	"slices"
	"strings"
	"time"
)

// A store's move as the admin endpoint reports it: the one under way,
// and the last that ended.

// last returns the pool's last move once it ended, or nil.
func (mv *storeMover) last() *LastMove {
	sum := mv.mig.lastMove.Load()
	if sum == nil {
		return nil
	}
	return &LastMove{Ended: sum.ended, Keys: sum.keys, Bytes: sum.bytes, TookSeconds: sum.took.Seconds(), SteadyP99Ms: msOf(sum.steady),
		PeakP99Ms: msOf(sum.peak), LatencyBoundMs: msOf(sum.bound), Slowed: sum.slowed, ServerKeysPerSecond: sum.serverRate,
		PredictedSeconds: sum.predicted.Seconds(), MovedSeconds: sum.moved.Seconds(), Restarted: sum.restarted}
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// status returns the pool's move under way and its last that ended, as
// the admin endpoint reports them (see keyMoves).
func (mv *storeMover) status() (*MoveStatus, *LastMove) { return mv.current(), mv.last() }

// current returns the pool's move as the admin endpoint reports it, or
// nil when none is under way.
func (mv *storeMover) current() *MoveStatus {
	m := moveOf(mv.place.Load())
	if m == nil || m.done.Load() {
		return nil
	}
	st := &m.stats
	ms := &MoveStatus{State: "moving", Since: m.began, Scanned: st.scanned.Load(), Moved: st.moved.Load(), MovedBytes: st.bytes.Load(),
		MovedByRequests: st.onRequest.Load(), Failed: st.failed.Load(), ETA: -1}
	switch {
	case !m.isOpen():
		ms.State = "waiting"
		if why := st.waiting.Load(); why != nil {
			ms.Waiting = *why
		}
	case m.paused.Load():
		ms.State = "paused"
	case st.outsideHours.Load():
		ms.State = "outside_hours"
	}
	if e := st.lastErr.Load(); e != nil {
		ms.LastError = *e
	}
	ms.ToMove, ms.ETA = moveEstimate(m)
	if opened := st.opened.Load(); opened > 0 {
		if secs := time.Since(time.Unix(0, opened)).Seconds(); secs > 0 {
			ms.Rate = float64(ms.Moved+ms.MovedByRequests) / secs
		}
	}
	ms.SteadyP99Ms = msOf(m.steady)
	if w := m.window.Load(); w != nil {
		ms.Window, ms.LatencyBoundMs = w.Size(), msOf(w.Bound())
		peak, _ := w.Peak()
		ms.PeakP99Ms = msOf(peak)
	}
	for _, v := range m.priors {
		var addrs []string
		for _, b := range v.pl.servers {
			addrs = append(addrs, b.addr)
		}
		ms.From = append(ms.From, addrs)
	}
	st.bySource.Range(func(k, v any) bool {
		ss := v.(*sourceStats)
		ms.Servers = append(ms.Servers, MoveServer{Addr: k.(string), Held: ss.held.Load(), Scanned: ss.scanned.Load(), Moved: ss.moved.Load(), Done: ss.done.Load()})
		return true
	})
	slices.SortFunc(ms.Servers, func(a, b MoveServer) int { return strings.Compare(a.Addr, b.Addr) })
	return ms
}
