package proxy

import (
	"log/slog"
	"sync"
	"sync/atomic"
)

// placing builds a pool's placement and publishes it: after a change of
// membership (follow), after a change of health (rebuild, for twemproxy's
// distributions) and when a server comes back (restoreChange). It owns
// the lock that serializes the placement's writers (mu, which the
// windows and a store's move take too, as they publish under it) and
// the servers' shares measured under the placement in use.
//
// It is given what it reads of its pool when the pool is made
// (newPlacing): the pool's configuration, log and servers, the source's
// version the pool serves (its follower's layout is the one a change
// follows), and a pointer to the pool's placement, which requests load
// from the pool itself. Two of the pool's other parts follow each
// placement it publishes, and it holds them through what it asks of
// them, not the pool: the windows (placeWindows) and a store's mover
// (placeMoves), given once the pool has made them, which is after
// placing: their placement's writers take its lock. saveState is the
// hook the server sets once it has made the pool, to have the state file
// written again; nil until then.
type placing struct {
	cfg      *PoolConfig
	log      *slog.Logger
	backends []*backend
	members  *sourceView
	place    *atomic.Pointer[placement]
	mig      placeWindows
	mover    placeMoves

	// mu serializes the writers of place.
	mu sync.Mutex
	// shareCache holds the servers' shares of keys under a placement.
	shareCache atomic.Pointer[keyShares]
	saveState  func()
}

// placeWindows is what placing asks of the pool's windows (migrations):
// the migration that follows a change of placement, the placement stored
// (between two batches of a sweep's deletes), and whether a server's
// return is followed by one.
type placeWindows interface {
	after(prev, pl *placement, moved, readPrev bool) *migration
	publish(pl *placement)
	followReturn() bool
}

// placeMoves is what placing asks of a store's moves (keyMoves): the
// move that follows a change of placement, and a wake for its loop once
// a placement is published.
type placeMoves interface {
	after(prev, pl *placement) keyMove
	wake()
}

// newPlacing returns the placing of a pool of cfg over backends, on the
// source's version members (nil for none), publishing to place; the
// pool gives it its windows and mover once it has made them.
func newPlacing(cfg *PoolConfig, log *slog.Logger, backends []*backend, members *sourceView, place *atomic.Pointer[placement]) *placing {
	return &placing{cfg: cfg, log: log, backends: backends, members: members, place: place}
}

// publish stores pl as the pool's placement and wakes the loops that
// follow it: the windows' and the store's move's. The caller holds mu.
func (pg *placing) publish(pl *placement) {
	pg.mig.publish(pl)
	pg.mover.wake()
}

// restoreChange restores a server with restore and, for a pool of a
// kolco distribution under rehash, starts the sweep of its keys' copies
// left on the servers that stood in for it, judged by the placement with
// it up. twemproxy's distributions start theirs in the rebuild.
//
// No window reads the stand-ins on the server's misses, as a change's
// does its previous servers: what the server missed is settled before it
// serves (see outage), and any other copy a stand-in holds of its keys is
// one no write of the outage vouched for - a copy a change left behind,
// older than the key's last write, which a server started again empty,
// or one that evicted the key, would have read back and copied
// (TestReturnWindowReadsNoLeftBehindCopy). A change's window still open
// goes on.
func (pg *placing) restoreChange(restore func()) {
	restore()
	if !pg.mig.followReturn() {
		return
	}
	pg.mu.Lock()
	cur := pg.place.Load()
	cp := *cur
	cp.mig = pg.mig.after(cur, &cp, true, false)
	pg.publish(&cp)
	pg.mu.Unlock()
}

// stateChanged has the state file written again with the pool's record:
// when its placement's state changes (a mark of its fresh start, see
// afreshCheck) and once a store's move ends.
func (pg *placing) stateChanged() {
	if pg.saveState != nil {
		pg.saveState()
	}
}

// backendNamed returns the pool's server of that name, or nil: a store's
// move asks it of the placement it publishes by (movePool).
func (pg *placing) backendNamed(name string) *backend { return backendNamed(pg.backends, name) }
