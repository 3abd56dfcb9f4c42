package proxy

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// StateMissing says that a pool of a history-dependent distribution (jump,
// jumpback, anchor, slots) started without the record of its placement's
// history while its servers held data. Such a placement depends on the
// changes that led to it; placed afresh over the same servers, keys can
// sit elsewhere than where they were written, and a read of one that moved
// misses until it is written again.
//
// It lasts as long as it is true, not as long as the process: it is kept
// in the state file with the fresh placement, so that a restart says it
// again, and it ends when a check of the servers finds no key whose read
// misses because of it - each such key written again where the placement
// looks, expired, evicted or deleted (see afreshCheck.afreshMisses).
type StateMissing struct {
	// Why is what was missing: the state file, the pool's record in it,
	// or a record of the pool's placement settings.
	Why string `json:"why"`
	// Items is how many items the servers held when the pool started
	// (memcached's curr_items, Redis's DBSIZE).
	Items int64     `json:"items"`
	Since time.Time `json:"since"`
	// Misses is how many keys the servers held, at the last check, where
	// the placement does not look and where it looks they were not: keys
	// whose reads miss (at least that many when the check stopped at
	// maxAfreshMisses); -1 when the servers could not be listed.
	Misses int64 `json:"misses"`
	// CheckedAt is when they were last counted.
	CheckedAt time.Time `json:"checked_at,omitzero"`
}

// afreshRecheck is how often a pool whose placement began afresh counts
// again the keys that miss because of it: each count lists every key of
// its servers, so not often; a restart counts at once.
const afreshRecheck = time.Hour

// afreshCheck counts the keys whose reads miss because a pool's placement
// began afresh, without its history, and marks the pool so while some do
// (see StateMissing). It is given what it reads of its pool when it is
// made: the pool's servers, placement, front and log, the wait group the
// pool's close waits on (its counts run on goroutines of their own), the
// pool's mark (poolStats.stateMissing, which the status page, the metrics
// and the state file read) and the pool's placing's stateChanged, which
// has the state file written again (a method value: the server sets the
// hook it calls once it has made the pool, see placing); and, as the
// pool starts, the pool's context.
//
// A pool embeds it: the server, which knows why a pool began afresh,
// starts the counts on the pool it made (checkAfresh, resumeAfresh,
// recheckAfresh).
type afreshCheck struct {
	backends     []*backend
	place        *atomic.Pointer[placement]
	front        keyLister
	log          *slog.Logger
	distribution string
	mark         *atomic.Pointer[StateMissing]
	saveState    func()
	// wg is the one the pool's close waits on; ctx the pool's, given as
	// it starts (pool.start).
	ctx context.Context
	wg  *sync.WaitGroup
}

// keyLister is what an afresh check asks of the pool's front (see
// front).
type keyLister interface {
	items(ctx context.Context, b *backend) (int64, error)
	listKeys(ctx context.Context, b *backend, each func(key string) error) error
	holds(ctx context.Context, b *backend, keys []string) ([]bool, error)
}

// checkAfresh counts the items the pool's servers hold, once, after the
// pool started placing keys afresh for why, and when some of them miss
// because of it, records it (the status page, /v1/pools and
// kolco_proxy_state_missing say so; the state file keeps it) and logs a
// warning. Servers that do not answer are asked again, a few times.
func (a *afreshCheck) checkAfresh(why string) {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		items, answered, ok := a.countItems()
		switch {
		case !ok:
			return
		case answered > 0 && items == 0:
			a.log.Debug("pool started without its placement history; its servers hold no data", "why", why)
			return
		case answered == 0:
			a.log.Warn("pool started without its placement history, and no server answered to say whether it holds data", "why", why)
			return
		}
		misses, err := a.afreshMisses(a.ctx)
		switch {
		case a.ctx.Err() != nil:
			return
		case err == nil && misses == 0:
			a.log.Info("pool started without its placement history; its servers hold data, but every key is where the placement looks for it: nothing misses",
				"why", why, "items", items)
			return
		case err != nil:
			a.log.Warn("pool started without its placement history: its servers could not be listed to count the keys that miss", "err", err)
			misses = -1
		}
		now := time.Now()
		a.mark.Store(&StateMissing{Why: why, Items: items, Since: now, Misses: misses, CheckedAt: now})
		a.log.Warn("pool started without its placement history while its servers hold data: keys are placed afresh, and reads of those that moved miss; "+
			"if the pool ran before, stop the proxy, put the state file back (from a backup or a proxy beside it) and start again",
			"why", why, "items", items, "misses", misses, "distribution", a.distribution)
		a.saveState()
		a.recheckAfresh(afreshRecheck)
	}()
}

// countItems counts the items the pool's servers hold, asking each up to
// three times; ok is false when the pool closed meanwhile.
func (a *afreshCheck) countItems() (items int64, answered int, ok bool) {
	for _, b := range a.backends {
		for try := 0; try < 3; try++ {
			n, err := a.front.items(a.ctx, b)
			if err == nil {
				items += n
				answered++
				break
			}
			select {
			case <-a.ctx.Done():
				return 0, 0, false
			case <-time.After(time.Second):
			}
		}
	}
	return items, answered, true
}

// recheckAfresh counts again, after wait and then every afreshRecheck,
// the keys that miss because the pool's placement began afresh, while it
// is marked so: the mark ends, and the state file forgets it, once none
// does; until then each count updates it, and a restart warns again.
func (a *afreshCheck) recheckAfresh(wait time.Duration) {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		for {
			select {
			case <-a.ctx.Done():
				return
			case <-time.After(wait):
			}
			if a.checkAfreshAgain() {
				return
			}
			wait = afreshRecheck
		}
	}()
}

// checkAfreshAgain counts the keys that miss because the pool's placement
// began afresh, and reports whether the mark has ended.
func (a *afreshCheck) checkAfreshAgain() bool {
	mark := a.mark.Load()
	if mark == nil {
		return true
	}
	misses, err := a.afreshMisses(a.ctx)
	if a.ctx.Err() != nil {
		return true
	}
	if err != nil {
		a.log.Warn("the pool's placement began afresh without its history; its servers could not be listed to count the keys that still miss",
			"since", mark.Since, "err", err)
		return false
	}
	if misses == 0 {
		a.mark.CompareAndSwap(mark, nil)
		a.log.Info("no key misses any more because the pool's placement began afresh without its history: each was written again, expired or was deleted",
			"since", mark.Since)
		a.saveState()
		return true
	}
	next := *mark
	next.Misses, next.CheckedAt = misses, time.Now()
	a.mark.CompareAndSwap(mark, &next)
	a.log.Warn("the pool's placement began afresh without its history, and its servers still hold keys whose reads miss: "+
		"this ends once each is written again, expires or is deleted",
		"why", mark.Why, "since", mark.Since, "misses", misses, "distribution", a.distribution)
	a.saveState()
	return false
}

// resumeAfresh takes over the mark the state file kept for the pool, and
// counts at once whether keys still miss because of it.
func (a *afreshCheck) resumeAfresh(mark *StateMissing) {
	if mark == nil {
		return
	}
	a.mark.Store(mark)
	a.recheckAfresh(0)
}
