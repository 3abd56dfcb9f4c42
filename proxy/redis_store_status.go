package proxy

import (
	"slices"
	"strings"
	"time"
)

// A store's move as the admin endpoint reports it: the one under way,
// and the last that ended.

// MoveStatus is a store's move of its keys to their new servers, as the
// admin endpoint reports it while one is under way (see Store).
type MoveStatus struct {
	// State is "waiting" (for the pool this one replaced to answer its
	// requests in flight, or for the proxies of kolco.admin_peers to
	// place by the new placement), "moving", "paused" (the mover; the
	// requests still move their keys), or "outside_hours" (the mover
	// waits for store.hours; the requests still move their keys).
	State string `json:"state"`
	// Waiting says what the move waits for, while it does.
	Waiting string `json:"waiting,omitempty"`
	// From are the placements the move follows, newest first, each as
	// the addresses of its servers.
	From  [][]string `json:"from"`
	Since time.Time  `json:"since"`
	// Scanned is how many keys the mover has listed on the old servers;
	// ToMove its estimate of how many of those servers' keys move, Moved
	// how many it moved (MovedBytes their size, by MEMORY USAGE), and
	// MovedByRequests how many requests moved first.
	Scanned         int64 `json:"scanned"`
	ToMove          int64 `json:"to_move"`
	Moved           int64 `json:"moved"`
	MovedBytes      int64 `json:"moved_bytes"`
	MovedByRequests int64 `json:"moved_by_requests"`
	// Failed counts the MIGRATEs that failed (the keys stayed where they
	// were, and are tried again); LastError says why the last did.
	Failed    int64  `json:"failed"`
	LastError string `json:"last_error,omitempty"`
	// Rate is keys moved a second since the move opened. ETA is the
	// seconds left: each old server's keys still to move at the pace
	// they left it over the last second, the slowest server's; -1 while
	// unknown.
	Rate float64 `json:"rate"`
	ETA  float64 `json:"eta_seconds"`
	// Window is how many MIGRATEs run at once from each server, set from
	// the clients' p99 (below 1: one, part of the time); LatencyBoundMs
	// the p99 it keeps them under, SteadyP99Ms their p99 before the move
	// and PeakP99Ms the highest of a tenth of a second since.
	Window         float64 `json:"window"`
	LatencyBoundMs float64 `json:"latency_bound_ms"`
	SteadyP99Ms    float64 `json:"steady_p99_ms"`
	PeakP99Ms      float64 `json:"peak_p99_ms"`
	// Servers are the mover's figures for each old server.
	Servers []MoveServer `json:"servers"`
}

// MoveServer is the mover's progress through one old server.
type MoveServer struct {
	Addr string `json:"addr"`
	// Held is how many keys it held when the mover began.
	Held    int64 `json:"held"`
	Scanned int64 `json:"scanned"`
	Moved   int64 `json:"moved"`
	Done    bool  `json:"done"`
}

// LastMove is a store's last move, once it ended, as the admin endpoint
// reports it until the next.
type LastMove struct {
	Ended time.Time `json:"ended"`
	// Keys moved, by the mover and by requests; Bytes their size, by
	// MEMORY USAGE of a sample; TookSeconds from the change to the end.
	Keys        int64   `json:"keys"`
	Bytes       int64   `json:"bytes"`
	TookSeconds float64 `json:"took_seconds"`
	// The clients' p99 before the move (SteadyP99Ms), at its worst tenth
	// of a second meanwhile (PeakP99Ms), the bound the mover kept it
	// under, and how many times the mover halved its pace for it.
	SteadyP99Ms    float64 `json:"steady_p99_ms"`
	PeakP99Ms      float64 `json:"peak_p99_ms"`
	LatencyBoundMs float64 `json:"latency_bound_ms"`
	Slowed         int     `json:"slowed"`
	// ServerKeysPerSecond is the keys a second its busiest old server
	// sent, from the move's opening to its end: the pace kolco plan
	// --move-rate-from predicts the next move at. PredictedSeconds is the
	// mover's time as predicted when it began, at the pace of the move
	// before (absent when there was none), beside MovedSeconds, the
	// mover's time measured from the move's opening.
	ServerKeysPerSecond float64 `json:"server_keys_per_second"`
	PredictedSeconds    float64 `json:"predicted_seconds,omitempty"`
	MovedSeconds        float64 `json:"moved_seconds"`
	// Restarted are the servers that started again while the move ran
	// (their run_id changed): one that came back empty lost the keys it
	// held, or that had moved to it, and the move could not tell.
	Restarted []RestartedServer `json:"restarted,omitempty"`
}

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

// status returns the pool's move as the admin endpoint reports it, or
// nil when none is under way.
func (mv *storeMover) status() *MoveStatus {
	m := mv.place.Load().move
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
