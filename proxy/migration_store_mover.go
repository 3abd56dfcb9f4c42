package proxy

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The mover: the part of a store's move that does not wait for requests.
// It goes through the servers of the placements a move follows and sends
// each key that changed owner to its new server, at a bounded rate, so
// that a move ends even when no client asks for the keys it moves.

// runMover goes through every server of m's placements and moves each key
// it holds that the placement puts elsewhere, at most Store.Rate keys a
// second from each, Store.Batch at a time. It reports whether it went
// through all of them; false when the pool closes or m is replaced.
func (p *pool) runMover(m *storeMove) bool {
	var sources []*backend
	for _, v := range m.priors {
		for _, b := range v.pl.servers {
			if !slices.ContainsFunc(sources, func(s *backend) bool { return s.addr == b.addr }) {
				sources = append(sources, b)
			}
		}
	}
	m.stats.sources.Store(int64(len(sources)))
	m.stats.finished.Store(0)
	for _, b := range sources {
		if n, err := p.front.items(p.moveCtx, b); err == nil {
			m.stats.held.Add(n)
		}
	}
	var wg sync.WaitGroup
	var all atomic.Bool
	all.Store(true)
	for _, src := range sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !p.moveFrom(m, src) {
				all.Store(false)
				return
			}
			m.stats.finished.Add(1)
			m.stats.source(src.addr).done.Store(true)
		}()
	}
	wg.Wait()
	return all.Load() && p.place.Load().move == m
}

// moveFrom moves the keys src holds that the placement puts elsewhere. It
// reports false when the pool closes or m is replaced.
func (p *pool) moveFrom(m *storeMove, src *backend) bool {
	cfg := p.cfg.Store
	limit := newRate(cfg.Rate)
	ss := m.stats.source(src.addr)
	cursor := "0"
	batches := map[*backend][]string{}
	var sc routeScratch
	flush := func(dst *backend) bool {
		keys := batches[dst]
		for backoff := 100 * time.Millisecond; len(keys) > 0; backoff = min(2*backoff, 5*time.Second) {
			if !p.moveWaits(m, limit, len(keys)) {
				return false
			}
			size, err := p.front.migrate(p.moveCtx, src, dst, keys)
			if err == nil {
				m.stats.moved.Add(int64(len(keys)))
				ss.moved.Add(int64(len(keys)))
				m.stats.bytes.Add(size)
				p.stats.storeMoved.Add(int64(len(keys)))
				break
			}
			m.stats.failed.Add(1)
			line := fmt.Sprintf("%s -> %s: %v", src.addr, dst.addr, err)
			m.stats.lastErr.Store(&line)
			if ok, held := p.moveLog.allow(); ok {
				p.log.Warn("store move: MIGRATE failed; the keys stay on their old server and are tried again", "from", src.addr, "to", dst.addr,
					"error", err, "retry", backoff, "not_logged", held)
			}
			if !sleepCtx(p.moveCtx, backoff) {
				return false
			}
		}
		batches[dst] = keys[:0]
		return true
	}
	for {
		if p.moveCtx.Err() != nil || p.place.Load().move != m {
			return false
		}
		keys, next, err := p.front.scan(p.moveCtx, src, cursor, max(cfg.Batch*4, 100))
		if err != nil {
			line := fmt.Sprintf("SCAN %s: %v", src.addr, err)
			m.stats.lastErr.Store(&line)
			if !sleepCtx(p.moveCtx, time.Second) {
				return false
			}
			continue
		}
		pl := p.place.Load()
		if pl.move != m {
			return false
		}
		m.stats.scanned.Add(int64(len(keys)))
		ss.scanned.Add(int64(len(keys)))
		for _, k := range keys {
			owners := pl.route([]byte(k), false, &sc)
			if len(owners) == 0 || owners[0].addr == src.addr {
				continue
			}
			dst := owners[0]
			m.stats.found.Add(1)
			batches[dst] = append(batches[dst], k)
			if len(batches[dst]) >= cfg.Batch && !flush(dst) {
				return false
			}
		}
		for dst := range batches {
			if !flush(dst) {
				return false
			}
		}
		if next == "0" {
			return true
		}
		cursor = next
	}
}

// moveWaits waits while m is paused, then for the rate limit's room for n
// keys. It reports false when the pool closes or m is replaced.
func (p *pool) moveWaits(m *storeMove, limit *rate, n int) bool {
	for m.paused.Load() {
		if !sleepCtx(p.moveCtx, 200*time.Millisecond) || p.place.Load().move != m {
			return false
		}
	}
	return sleepCtx(p.moveCtx, limit.take(n))
}

// rate spaces out a mover's keys to at most n a second.
type rate struct {
	every time.Duration
	next  time.Time
}

func newRate(perSecond int) *rate {
	return &rate{every: time.Second / time.Duration(max(perSecond, 1))}
}

// take returns how long to wait before n more keys.
func (r *rate) take(n int) time.Duration {
	now := time.Now()
	if r.next.Before(now) {
		r.next = now
	}
	wait := r.next.Sub(now)
	r.next = r.next.Add(time.Duration(n) * r.every)
	return wait
}

// sleepCtx sleeps for d; it reports false when ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// migrateRoles keeps a proxy's MIGRATEs from waiting on each other. A
// MIGRATE blocks its source until the target answers, and a server that
// is itself in a MIGRATE answers nothing meanwhile: a MIGRATE from A to B
// and one from B to A at once each wait for the other until
// migrate_timeout, and so does any cycle of them. So a server is, at any
// moment, the source of a proxy's MIGRATEs or their target, never both;
// MIGRATEs in one direction run side by side. The roles outlive a reload:
// the pool that replaces another takes its roles with its MIGRATEs in
// flight.
type migrateRoles struct {
	mu      sync.Mutex
	role    map[string]int // > 0: the source of that many; < 0: the target
	changed chan struct{}  // closed and replaced when a MIGRATE ends
}

func newMigrateRoles() *migrateRoles {
	return &migrateRoles{role: map[string]int{}, changed: make(chan struct{})}
}

// acquire waits until src may be a source and dst a target, and takes
// both roles; it fails when ctx ends or at deadline (none when zero).
func (m *migrateRoles) acquire(ctx context.Context, deadline time.Time, src, dst string) error {
	var timer <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timer = t.C
	}
	for {
		m.mu.Lock()
		if m.role[src] >= 0 && m.role[dst] <= 0 {
			m.role[src]++
			m.role[dst]--
			m.mu.Unlock()
			return nil
		}
		changed := m.changed
		m.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-timer:
			return fmt.Errorf("%s is the target of a MIGRATE still running, or %s its source", src, dst)
		}
	}
}

// release gives back the roles acquire took.
func (m *migrateRoles) release(src, dst string) {
	m.mu.Lock()
	for addr, d := range map[string]int{src: -1, dst: 1} {
		if m.role[addr] += d; m.role[addr] == 0 {
			delete(m.role, addr)
		}
	}
	close(m.changed)
	m.changed = make(chan struct{})
	m.mu.Unlock()
}
