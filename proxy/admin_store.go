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
	// place by the new placement), "moving", or "paused" (the mover; the
	// requests still move their keys).
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
	// Rate is keys moved a second since the move opened; ETA the seconds
	// left at that rate, -1 while unknown.
	Rate float64 `json:"rate"`
	ETA  float64 `json:"eta_seconds"`
	// Servers are the mover's figures for each old server.
	Servers []MoveServer `json:"servers"`
}

// MoveServer is the mover's progress through one old server.
type MoveServer struct {
	Addr    string `json:"addr"`
	Scanned int64  `json:"scanned"`
	Moved   int64  `json:"moved"`
	Done    bool   `json:"done"`
}

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
	}
	if e := st.lastErr.Load(); e != nil {
		ms.LastError = *e
	}
	if scanned := st.scanned.Load(); scanned > 0 {
		ms.ToMove = st.held.Load() * st.found.Load() / scanned
	}
	if opened := st.opened.Load(); opened > 0 {
		if secs := time.Since(time.Unix(0, opened)).Seconds(); secs > 0 {
			ms.Rate = float64(ms.Moved+ms.MovedByRequests) / secs
		}
		if left := ms.ToMove - ms.Moved - ms.MovedByRequests; ms.Rate > 0 && ms.Scanned > 0 {
			ms.ETA = max(float64(left), 0) / ms.Rate
		}
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
		ms.Servers = append(ms.Servers, MoveServer{Addr: k.(string), Scanned: ss.scanned.Load(), Moved: ss.moved.Load(), Done: ss.done.Load()})
		return true
	})
	slices.SortFunc(ms.Servers, func(a, b MoveServer) int { return strings.Compare(a.Addr, b.Addr) })
	return ms
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
			writeJSON(w, http.StatusOK, p.moveStatus())
		})
	}
}
