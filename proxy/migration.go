package proxy

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A migration is what follows a change of placement that moves keys (a
// reload that adds, removes, re-weights or readdresses servers; a server
// restored under rehash, whose window reads no stand-in (see
// restoreChange); for ketama and modula, any rebuild): the window
// in which reads fall back to the placements the change replaced (see
// mc_warm.go), then the sweep of the copies left on servers that no longer
// own them (see mc_sweep.go). It rides on the placement it follows, so that
// a request that loads the placement sees its migration in the same load,
// and a placement without one (the usual case) costs a request one nil
// check.
//
// The window ends when its time is up, when fallbacks stop finding data
// (warm.quiet in a row found nothing), or when a newer change replaces it:
// the newer migration falls back through the newer placement first and
// then through those of this window, up to warm.depth of them. The priors
// of a closed window are never read again: writes made after it closed
// did not delete their copies.
type migration struct {
	// priors are the placements replaced, newest first; empty when warm
	// changes are off.
	priors []*prior
	// ends is when the window closes by time.
	ends time.Time
	// state moves from open to sweep to settled, never back.
	state atomic.Int32
	// sweep is set when the pool sweeps after the window.
	sweep bool

	// quiet counts fallbacks in a row that found nothing; at quietLimit
	// the window ends, signalled by closing quietCh once.
	quiet      atomic.Int64
	quietLimit int64
	quietCh    chan struct{}
	quietOnce  sync.Once

	// tainted marks, by backend slot, the previous servers this window
	// never reads again: one found down, or one a delete or a fallback
	// failed at, may hold a copy older than a write made meanwhile.
	tainted []atomic.Bool

	// copying is held for reading by fallback copies from the check that
	// the window is open until the copy is stored, and for writing by
	// the close of the window: after it, no copy is under way, so that a
	// delete routed without the window cannot be undone by one.
	copying sync.RWMutex
	// carried is the open migration this one carries on from, whose
	// window ends with this one's: requests still in flight may use it.
	// Guarded by copying.
	carried *migration
}

// Migration states.
const (
	migOpen    int32 = iota // the window is open
	migSweep                // the window closed; the sweep is due
	migSettled              // nothing left to do
)

// changeRules are what a pool's front makes of its changes of placement
// that move keys (see front.changes). A memcached pool's come from its
// warm and sweep settings; a Redis pool's changes are cold and not swept.
type changeRules struct {
	depth  int
	window time.Duration
	quiet  int
	sweep  bool
}

// open reports whether the window is open: whether requests fall back.
func (m *migration) open() bool { return m.state.Load() == migOpen && len(m.priors) > 0 }

// end closes the window, and those of the migrations it carries on
// from, moving its state to next: no request falls back from then on, and
// no fallback copy is under way when it returns.
func (m *migration) end(next int32) {
	m.copying.Lock()
	m.state.CompareAndSwap(migOpen, next)
	carried := m.carried
	m.carried = nil
	m.copying.Unlock()
	if carried != nil {
		carried.end(migSettled)
	}
}

// readable reports whether the window may read from b.
func (m *migration) readable(b *backend) bool {
	return !b.health.isDown() && !m.tainted[b.slot].Load()
}

// taint marks b as never to be read again in this window.
func (m *migration) taint(b *backend) { m.tainted[b.slot].Store(true) }

// fallbackFound counts a fallback lookup that found the key or not; a run
// of quietLimit that found nothing ends the window.
func (m *migration) fallbackFound(found bool) {
	if found {
		m.quiet.Store(0)
		return
	}
	if m.quiet.Add(1) == m.quietLimit {
		m.quietOnce.Do(func() { close(m.quietCh) })
	}
}

// signature returns what decides where pl sends each key, down to the
// servers' addresses: two placements of equal signatures move no key
// between servers. For kolco's distributions it is the layout's
// fingerprint with the hash tag and every node's address; for twemproxy's
// the settings and the server list it was built over.
func signature(cfg *PoolConfig, pl *placement) string {
	var b strings.Builder
	if l := pl.layout(); l != nil {
		b.WriteString(l.fingerprint)
	} else {
		b.WriteString(cfg.Distribution + " " + cfg.Hash)
	}
	b.WriteString(" " + cfg.HashTag + " " + strconv.Itoa(pl.replicas))
	return b.String() + serversSignature(pl.servers)
}

// serversSignature is the end of a signature: the servers, each by name,
// address and weight.
func serversSignature(servers []*backend) string {
	var b strings.Builder
	for _, s := range servers {
		b.WriteString(" " + s.name() + "@" + s.addr + ":" + strconv.FormatFloat(s.node.EffectiveWeight(), 'g', -1, 64))
	}
	return b.String()
}

// after returns the migration of pl, the placement that replaces
// prev by a change, moved or not: a new window over prev and the priors of
// prev's open window when the change moved keys, else prev's migration
// going on. With readPrev false a window that opens does not read prev,
// only what prev's open window read (a server's return, see
// placing.restoreChange). The caller holds placeMu.
func (ms *migrations) after(prev, pl *placement, moved, readPrev bool) *migration {
	if prev == nil {
		return nil
	}
	old := prev.mig
	if old != nil && old.state.Load() == migSettled {
		old = nil
	}
	r := ms.rules
	m := &migration{sweep: r.sweep, quietLimit: int64(r.quiet), quietCh: make(chan struct{})}
	switch {
	case moved:
		if r.depth > 0 {
			if readPrev {
				m.priors = append(m.priors, ms.priorOf(prev))
			}
			if old != nil && old.open() {
				m.priors = append(m.priors, ms.remapPriors(old.priors)...)
			}
			m.priors = m.priors[:min(len(m.priors), r.depth)]
		}
		m.ends = time.Now().Add(r.window)
		if len(m.priors) > 0 {
			ms.stats.opened.Inc()
		}
	case old == nil:
		return nil
	default: // the same placement: the old migration goes on
		m.state.Store(old.state.Load())
		if r.depth > 0 && old.open() {
			m.priors = ms.remapPriors(old.priors)
		}
		m.ends = old.ends
	}
	if m.state.Load() == migOpen && len(m.priors) == 0 {
		m.state.Store(migSweep)
	}
	switch {
	case old == nil || !old.open():
	case m.open():
		m.carried = old
	default:
		old.end(migSettled) // the pool's changes are cold now
	}
	if m.state.Load() == migSweep && !r.sweep {
		return nil
	}
	m.tainted = make([]atomic.Bool, len(ms.backends)+len(ms.formers))
	if old != nil && m.open() {
		m.carryTaint(old)
	}
	return m
}

// carryTaint taints the servers of m that old tainted: a server tainted
// in the old window stays so, as it may hold a copy a write could not
// delete.
func (m *migration) carryTaint(old *migration) {
	var bad []string
	for _, b := range old.allServers() {
		if old.tainted[b.slot].Load() {
			bad = append(bad, b.addr)
		}
	}
	for _, b := range m.allServers() {
		if slices.Contains(bad, b.addr) {
			m.taint(b)
		}
	}
}

// allServers returns the servers of m's priors.
func (m *migration) allServers() []*backend {
	var out []*backend
	for _, v := range m.priors {
		for _, b := range v.pl.servers {
			if !slices.Contains(out, b) {
				out = append(out, b)
			}
		}
	}
	return out
}

// priorOf returns prev, a placement of this pool or of the one it
// replaces, as a prior on this pool's backends, with the servers down now
// marked down.
func (ms *migrations) priorOf(prev *placement) *prior {
	cp := *prev
	cp.mig, cp.move = nil, nil
	cp.servers = make([]*backend, len(prev.servers))
	v := &prior{pl: &cp, down: make([]bool, len(prev.servers))}
	for i, b := range prev.servers {
		cp.servers[i] = ms.backendFor(b)
		v.down[i] = b.health.isDown()
	}
	return v
}

// remapPriors returns priors on this pool's backends.
func (ms *migrations) remapPriors(priors []*prior) []*prior {
	out := make([]*prior, len(priors))
	for i, v := range priors {
		cp := *v.pl
		cp.servers = make([]*backend, len(v.pl.servers))
		for j, b := range v.pl.servers {
			cp.servers[j] = ms.backendFor(b)
		}
		out[i] = &prior{pl: &cp, down: v.down}
	}
	return out
}

// backendFor returns the backend of this pool that reaches the server of
// b, a backend of this pool or of another: b itself, else the one of the
// same name and address, else one of the same address, else a former
// backend made for it, which only migrations use. The caller holds
// placeMu, or the pool is not started yet.
func (ms *migrations) backendFor(b *backend) *backend {
	if ms.own(b) {
		return b
	}
	var sameAddr *backend
	for _, c := range ms.backends {
		if c.addr == b.addr {
			if c.name() == b.name() {
				return c
			}
			sameAddr = c
		}
	}
	if sameAddr != nil {
		return sameAddr
	}
	for _, c := range ms.formers {
		if c.addr == b.addr {
			return c
		}
	}
	f := ms.newFormer(b.node)
	f.former = true
	f.slot = len(ms.backends) + len(ms.formers)
	ms.formers = append(ms.formers, f)
	watched := ms.formers // appended to, never changed: a view of its own
	ms.watched.Store(&watched)
	return f
}

// own reports whether b is a backend of the pool: one of its servers, or
// a former one made by backendFor, at its slot. The caller holds placeMu,
// or the pool is not started yet.
func (ms *migrations) own(b *backend) bool {
	if b.slot < len(ms.backends) {
		return ms.backends[b.slot] == b
	}
	i := b.slot - len(ms.backends)
	return i < len(ms.formers) && ms.formers[i] == b
}

// nStripes is the number of stripes: enough that two keys in flight at
// once rarely share one.
const nStripes = 1024

// stripe orders the fallback copies of its keys with their writes.
type stripe struct {
	mu sync.Mutex
	// writes counts the writes and deletes sent in windows; a copy is
	// made only when it has not changed since its fallback began.
	writes atomic.Uint64
}

type stripes [nStripes]stripe

func (s *stripes) of(h uint64) *stripe { return &s[h%nStripes] }

// sources appends to dst the servers that held key under the window's
// placements and may hold it still, newest first: not n, the key's server
// now, nor one found twice. One marked down is tainted, never read in
// this window even once it is back.
func (m *migration) sources(dst []*backend, key []byte, n *backend, sc *routeScratch) []*backend {
	for _, v := range m.priors {
		o := v.owner(key, sc)
		if o == nil || o == n || o.addr == n.addr || slices.Contains(dst, o) {
			continue
		}
		if o.health.isDown() {
			m.taint(o)
			continue
		}
		dst = append(dst, o)
	}
	return dst
}
