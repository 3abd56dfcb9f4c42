package proxy

import "net/http"

// handleMove serves POST /v1/pools/{pool}/move/pause and .../resume: an
// operator pauses a store's mover and lets it go on. Requests go on
// moving their own keys while it is paused. It answers the move's status,
// or null when the move ended between the action and the answer.
func (a *adminReads) handleMove(mux *http.ServeMux) {
	for _, action := range []string{"pause", "resume"} {
		mux.HandleFunc("POST /v1/pools/{pool}/move/"+action, func(w http.ResponseWriter, r *http.Request) {
			p := a.pool(w, r)
			if p == nil {
				return
			}
			if !p.mover.pause(action == "pause") {
				writeJSON(w, http.StatusConflict, adminError{"the pool moves no keys now"})
				return
			}
			// Recorded before the answer, so that a restart right after
			// keeps the pause.
			a.rewriteState()
			ms, _ := p.mover.status()
			writeJSON(w, http.StatusOK, ms)
		})
	}
}
