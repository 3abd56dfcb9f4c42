package proxy

import (
	"context"
	"time"

	"github.com/kolco-dev/kolco"
)

// A store's moves as the engine, the server and the admin endpoint reach
// them. A store's move (see Store) is Redis's alone - MIGRATE, SCAN, big
// keys copied in pieces - and lives beside the Redis front
// (redis_store_*.go); the engine holds it through two interfaces, as
// net/http holds HTTP/2 behind a few methods: keyMove, the move a
// placement carries, which the engine asks one thing of (whether it
// ended: a placement with no move under way is settled), and keyMoves, a
// pool's side of its moves, which the pool, placing, a reload, the state
// file and the admin endpoint call. A pool's front makes its keyMoves
// (front.moves); a front with no store gives noMoves.

// keyMove is the move of a store's keys that follows a change, as a
// placement carries it; nil when no key is anywhere but where the
// placement puts it.
type keyMove interface {
	// ended reports whether every key is where the placement puts it.
	ended() bool
}

// keyMoves is a pool's side of its store's moves.
type keyMoves interface {
	// after and wake: placing's (see placeMoves).
	placeMoves
	// start starts the moves' loop under the pool's context; halt stops
	// it for good, before a pool that replaces this one serves.
	start(ctx context.Context)
	halt()
	// inherit takes over what the moves of old, the pool this one
	// replaces, share with it (the MIGRATEs under way, big keys'
	// copies); a move waits until drained is closed: old has answered
	// its requests in flight.
	inherit(old keyMoves, drained <-chan struct{})
	// resume publishes the pool's placement with the move a state file
	// records, before the pool starts; record returns the placements of
	// the move under way, for the state file, nil when none is, and
	// whether an operator paused it.
	resume(records []movePlacement, paused bool) error
	record() (moving []movePlacement, paused bool)
	// status returns the move under way (nil when none is) and the last
	// that ended (nil before one did), as the admin endpoint reports
	// them; pause pauses or resumes the mover of the move under way, and
	// reports false when none is.
	status() (*MoveStatus, *LastMove)
	pause(on bool) bool
	// onSentinels tells the moves of a pool on Sentinels how long they
	// let a master's primary be silent before they fail it over (see
	// storeMover.migrateTimeout); called before start.
	onSentinels(downAfter func(master string) time.Duration)
}

// noMoves are the moves of a pool whose front has no store: none.
type noMoves struct{}

func (noMoves) after(_, _ *placement) keyMove          { return nil }
func (noMoves) wake()                                  {}
func (noMoves) start(context.Context)                  {}
func (noMoves) halt()                                  {}
func (noMoves) inherit(keyMoves, <-chan struct{})      {}
func (noMoves) resume([]movePlacement, bool) error     { return nil }
func (noMoves) record() ([]movePlacement, bool)        { return nil, false }
func (noMoves) status() (*MoveStatus, *LastMove)       { return nil, nil }
func (noMoves) pause(bool) bool                        { return false }
func (noMoves) onSentinels(func(string) time.Duration) {}

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
	// they left it over the later half of the time since the mover began
	// on it (a second at least; paused time and time outside store.hours
	// left out), the slowest server's; -1 while unknown: until each
	// server still moving has moved a tenth of its keys.
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

// RestartedServer is a server that started again while a store's move
// ran, as last_move reports it: the keys it held when the move began (0
// when it was only a target) and those it holds now (-1: it could not be
// asked).
type RestartedServer struct {
	Addr  string `json:"addr"`
	Held  int64  `json:"held_when_the_move_began"`
	Holds int64  `json:"holds_now"`
}

// movePlacement is a placement a move follows, as the state file records
// it: the settings that decide it, its servers in the order it takes
// them, the algorithm's state for kolco's distributions, and its
// signature, which the placement rebuilt from them must have.
type movePlacement struct {
	distribution, hash, keyHash, hashTag string
	vnodes                               int
	nodes                                []kolco.Node
	state                                []byte
	sig                                  string
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
	// serverRate is the keys a second its busiest old server sent, over
	// the time from the move's opening to its end: the pace the next
	// move is predicted at, as kolco plan predicts one. predicted is what
	// this move was predicted to take so (0: no move before it measured
	// one).
	serverRate float64
	predicted  time.Duration
	// moved is the mover's time: from the move's opening to its end.
	moved time.Duration
	// restarted are the servers that started again while it ran.
	restarted []RestartedServer
}
