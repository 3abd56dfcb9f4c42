package proxy

import (
	"net/http"
	"slices"
	"strings"
	"time"
)

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

// RestartedServer is a server that started again while a move ran: the
// keys it held when the move began (0 when it was only a target) and
// those it holds now (-1: it could not be asked).
type RestartedServer struct {
	Addr  string `json:"addr"`
	Held  int64  `json:"held_when_the_move_began"`
	Holds int64  `json:"holds_now"`
}

// lastMove returns the pool's last move once it ended, or nil.
func (p *pool) lastMove() *LastMove {
	sum := p.mig.stats.lastMove.Load()
	if sum == nil {
		return nil
	}
	return &LastMove{Ended: sum.ended, Keys: sum.keys, Bytes: sum.bytes, TookSeconds: sum.took.Seconds(), SteadyP99Ms: msOf(sum.steady),
		PeakP99Ms: msOf(sum.peak), LatencyBoundMs: msOf(sum.bound), Slowed: sum.slowed, ServerKeysPerSecond: sum.serverRate,
		PredictedSeconds: sum.predicted.Seconds(), MovedSeconds: sum.moved.Seconds(), Restarted: restartedOf(sum.restarted)}
}

func restartedOf(rs []restartedServer) []RestartedServer {
	var out []RestartedServer
	for _, r := range rs {
		out = append(out, RestartedServer{Addr: r.addr, Held: r.held, Holds: r.holds})
	}
	return out
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// moveStatus returns the pool's move as the admin endpoint reports it, or
// nil when none is under way.
func (p *pool) moveStatus() *MoveStatus {
	m := p.place.Load().move
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

// handleMove serves POST /v1/pools/{pool}/move/pause and .../resume: an
// operator pauses a store's mover and lets it go on. Requests go on
// moving their own keys while it is paused.
func (s *Server) handleMove(mux *http.ServeMux) {
	for _, action := range []string{"pause", "resume"} {
		mux.HandleFunc("POST /v1/pools/{pool}/move/"+action, func(w http.ResponseWriter, r *http.Request) {
			p := s.adminPool(w, r)
			if p == nil {
				return
			}
			m := p.place.Load().move
			if m == nil || m.done.Load() {
				writeJSON(w, http.StatusConflict, adminError{"the pool moves no keys now"})
				return
			}
			m.paused.Store(action == "pause")
			// Recorded before the answer, so that a restart right after
			// keeps the pause.
			s.rewriteState()
			writeJSON(w, http.StatusOK, p.moveStatus())
		})
	}
}
