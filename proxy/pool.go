package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kolco-dev/kolco"
)

// pool is one configured pool: its servers, where its keys go among them,
// and the requests in flight. Where keys go is a placement, an immutable
// value that requests load once and a change builds beside the old one and
// publishes with one atomic swap.
type pool struct {
	name string
	cfg  *PoolConfig
	// front speaks the pool's protocol (see front).
	front    front
	backends []*backend
	// members is the membership source's version the pool serves (see
	// poolSource); nil for a pool on its configuration's servers.
	members *sourceView
	place   atomic.Pointer[placement]
	log     *slog.Logger
	met     *metrics
	stats   *poolStats

	// successor is the pool that replaced this one, once committed: a
	// server this pool marks down from then on (a request in flight
	// failing) is marked down there too (see catchUp).
	successor atomic.Pointer[pool]

	// placing builds and publishes place, under the lock of its writers
	// (see placing).
	placing *placing
	// outages are the servers' outage journals at work, checks their
	// probes and returns (see outage); afreshCheck counts the keys that
	// miss when the placement began afresh (see StateMissing).
	outages *outages
	checks  *healthChecks
	afreshCheck
	// mig is the pool's windows and the state of its migrations (see
	// migrations).
	mig *migrations
	// refuseLog limits the lines logged for clients refused over
	// max_client_connections.
	refuseLog logLimit
	// garbageLog limits the lines logged for clients closed after
	// maxErrorsInRow protocol errors.
	garbageLog logLimit
	// fleet is what the sweep and a store's move ask the pool's other
	// proxies with (see fleetCheck).
	fleet fleetCheck
	// retiring counts the pools this one's listener served before it that
	// still answer requests in flight; shared by the pools that replace
	// one another, and reported to the fleet (see sweepFleet.check).
	retiring *atomic.Int64
	// lateWrites counts the server connections, of this pool and the
	// pools it replaced, still open with a request the proxy gave up on
	// at its timeout (see drainLate): such a request may yet run, by a
	// placement before this one. Shared as retiring is; a store's move
	// opens only once there are none (see storeMover.open), and the fleet
	// hears of them as of a retiring pool.
	lateWrites *atomic.Int64
	// mover is the pool's side of a store's moves (see keyMoves), made
	// with the pool by its front; its loop runs in a store only.
	mover keyMoves
	// sentinel, set for a pool on Sentinels, is its membership source:
	// asked again at once when a server fails or answers as a replica
	// (its address may have changed), and asked how long the Sentinels
	// let a primary be silent by a store's moves.
	sentinel sentinelSource
	// serverTLS are the TLS files of connections to the servers, when
	// server_tls is set; clientTLS the listener's configuration, when tls
	// is; sentinelTLS that of connections to the Sentinels, when their
	// tls is.
	serverTLS   *certFiles
	clientTLS   *tls.Config
	sentinelTLS *tls.Config
	// frontState is what the front keeps of the pool while it runs (a
	// Redis pool's replica reads).
	frontState atomic.Value
	// traffic is the pool's traffic sample, nil when it is off (see
	// pool_traffic.go); set before the pool serves (takeTraffic).
	traffic *trafficSample
	// hot is the pool's hot-key cache, nil when it is off (see
	// pool_hotkeys.go); made with the traffic sample it reads.
	hot *hotCache

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // the health loop and the watchdog

	// requests are the requests in flight (see inFlight).
	requests inFlight
}

// inFlight counts a pool's requests in flight, so that a closing pool
// waits for them: refs counts them, plus closingBit once close begins;
// drained is closed when a closing pool has none left. A store's move of
// the pool that replaces this one waits on drained too (see inherit).
// A request is in flight from its read until its servers have answered
// it, not until its client has read the reply: counted in and out in
// pool_client.go (client.acquire, call.answered).
type inFlight struct {
	refs      atomic.Int64
	drained   chan struct{}
	drainOnce sync.Once
}

const closingBit = 1 << 40

// closing marks the pool closing, so that no request is counted in from
// now on, and returns drained.
func (f *inFlight) closing() <-chan struct{} {
	if f.refs.Add(closingBit) == closingBit {
		f.drainOnce.Do(func() { close(f.drained) })
	}
	return f.drained
}

// atomicPool is the pool a listener currently serves.
type atomicPool = atomic.Pointer[pool]

// poolSpec is what a pool is made of: its name, configuration and front,
// and the version of its membership source it serves, if any, whose nodes
// are then its servers.
type poolSpec struct {
	name    string
	cfg     *PoolConfig
	front   front
	members *sourceView
	log     *slog.Logger
	met     *metrics
}

// servers returns the nodes the pool's servers are: the source's
// version's, else the configuration's.
func (s *poolSpec) servers() []kolco.Node {
	if s.members != nil {
		return s.members.nodes
	}
	return s.cfg.nodes()
}

// newPool returns the pool of spec, placed afresh.
func newPool(spec poolSpec) (*pool, error) { return newPoolAfter(spec, nil, nil) }

// newPoolAfter returns the pool of spec, its placement published: the one
// that follows from, with prev kept as the placement it replaces (see
// placing.follow); both nil for a pool placed afresh.
func newPoolAfter(spec poolSpec, from *layout, prev *placement) (*pool, error) {
	p := &pool{name: spec.name, cfg: spec.cfg, front: spec.front, members: spec.members, log: spec.log.With("pool", spec.name),
		met: spec.met, stats: spec.met.forPool(spec.name, spec.front),
		retiring: new(atomic.Int64), lateWrites: new(atomic.Int64)}
	p.requests.drained = make(chan struct{})
	for _, n := range spec.servers() {
		b := newBackend(p, n)
		b.slot = len(p.backends)
		p.backends = append(p.backends, b)
	}
	pg := newPlacing(p.cfg, p.log, p.backends, spec.members, &p.place)
	p.placing = pg
	p.outages = newOutages(p.name, p.cfg, p.backends, &p.place, p.front, p.log, pg.restoreChange)
	p.checks = newHealthChecks(p.cfg, p.backends, p.front, p.log, p.outages, pg.rebuild)
	p.afreshCheck = afreshCheck{backends: p.backends, place: &p.place, front: p.front, log: p.log,
		distribution: p.cfg.Distribution, mark: &p.stats.stateMissing, wg: &p.wg, saveState: pg.stateChanged}
	p.mig = newMigrations(p)
	p.mover = p.front.moves(p)
	if spec.members != nil && spec.members.sentinel != nil {
		p.sentinel = spec.members.sentinel
		p.mover.onSentinels(p.sentinel.DownAfter)
	}
	pg.mig, pg.mover = p.mig, p.mover
	if err := pg.follow(from, prev); err != nil {
		return nil, placementError(p.name, err)
	}
	return p, nil
}

// inherit marks down in p the servers that are down in old, the pool it
// replaces, with their failure counts and retry times: a reload must not
// bring back a server that is down, nor, in a pool with replicas, let one
// that missed writes and deletes serve before it is emptied. Servers are
// matched by name and address: a name repointed at another address is
// another server. A store's move of p waits for old to drain. It is
// called before start.
func (p *pool) inherit(old *pool) error {
	type id struct{ name, addr string }
	was := make(map[id]*backend, len(old.backends))
	for _, b := range old.backends {
		was[id{b.name(), b.addr}] = b
	}
	// A store's move shares old's MIGRATEs and copies, and waits for
	// old's requests in flight.
	p.mover.inherit(old.mover, old.requests.drained)
	// p's sweep waits for old's requests in flight (see replacedAnswered).
	p.mig.follow(old.mig, old.requests.drained)
	p.mig.stripes = old.mig.stripes // fallbacks and writes in flight in old order with p's
	// Writes in flight in old hold off p's returns.
	p.outages.returns = old.outages.returns
	// Until it is committed, old settles the returns (see
	// backend_return_change.go).
	p.outages.held.Store(true)
	changed := false
	for _, b := range p.backends {
		ob := was[id{b.name(), b.addr}]
		if ob == nil {
			changed = p.inheritRepointed(old, b) || changed
			continue
		}
		b.stats = ob.stats // figures survive a reload
		if b.health.inherit(&ob.health) {
			changed = true
			// What it missed, still to settle, noted under old's
			// placement; the presweep passes b over.
			p.outages.downAcross(b, ob, old.place.Load())
		}
	}
	if !changed {
		return nil
	}
	if err := p.placing.rebuildPlacement(false, true); err != nil {
		return placementError(p.name, err)
	}
	return nil
}

// inheritRepointed takes over, for b, the outage of the server of b's name
// in old at another address: a failover (Sentinel promoting a replica)
// of a server that was marked down under rehash, whose keys were written
// to stand-ins meanwhile. The promoted server has none of those writes;
// so b starts down with the outage to settle, and its first check moves
// them onto it (see outage) before it serves, at once rather than a retry
// timeout later. It reports whether b starts down.
func (p *pool) inheritRepointed(old *pool, b *backend) bool {
	ob := old.backendNamed(b.name())
	if ob == nil || !p.outages.keeps {
		return false
	}
	o := ob.outage.Load()
	if o == nil || !ob.health.isDown() {
		return false
	}
	b.health.markDown()
	b.checkNow = true
	p.outages.downAcross(b, ob, nil)
	p.log.Info("server repointed while marked down: what its stand-ins took is moved onto its new address before it serves",
		"server", b.name(), "from", ob.addr, "to", b.addr, "keys", o.size())
	return true
}

// errDownBefore is the cause logged for a server marked down in a pool
// because the pool it replaces marked it down.
var errDownBefore = errors.New("marked down by the pool this one replaces")

// catchUp marks down in p, which replaces old, the servers old marked
// down since p inherited their health (see inherit): a change is prepared
// beside the running pool, which serves meanwhile, and under rehash or
// with replicas writes around a server it marks down. Taken as up, such a
// server would serve again without what it missed - every read of its
// keys a value older than one acknowledged. It is called as p is
// committed, before it serves; a server old marks down later, failing
// its requests in flight, is marked down in p as old marks it.
func (p *pool) catchUp(old *pool) {
	old.successor.Store(p)
	// p serves from now on, and settles the returns; old no longer.
	old.outages.held.Store(true)
	p.outages.held.Store(false)
	for _, ob := range old.backends {
		if ob.health.isDown() || ob.outage.Load() != nil {
			p.downWith(ob, false)
		}
	}
}

// downWith marks down p's server of ob's name and address, which the
// pool p replaces marked down, with ob's outage journal: what it misses
// is noted in the one journal from both pools, and settled by p's return
// of it. A server p marked down itself keeps its own. served says whether
// p serves already (see rebuildPlacement).
func (p *pool) downWith(ob *backend, served bool) {
	b := p.backendNamed(ob.name())
	if b == nil || b.addr != ob.addr || b.health.isDown() {
		return
	}
	// Counted before b is down: nothing routed around it goes unnoted.
	// Down as p's presweep ran, or about to be: its return sweeps it.
	p.outages.downAcross(b, ob, ob.pool.place.Load())
	if !b.health.inherit(&ob.health) {
		b.health.markDown() // ob's journal is open, its mark on the way
	}
	p.log.Warn("server down", "server", b.name(), "addr", b.addr, "policy", p.cfg.Ejection, "cause", errDownBefore)
	if p.cfg.Ejection == EjectRehash {
		if err := p.placing.rebuildPlacement(served, true); err != nil {
			p.log.Error("placement rebuild failed", "err", err)
		}
	}
	if n := p.successor.Load(); n != nil {
		n.downWith(b, true)
	}
}

// start runs the pool's goroutines; close stops them. Preconnecting runs
// on the pool's goroutine too: Start and Reload hold the server's lock,
// which accepting a client needs, and a server whose connects hang would
// hold it for a timeout per connection.
func (p *pool) start() {
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.outages.ctx, p.afreshCheck.ctx = p.ctx, p.ctx // they stop as the pool closes
	p.mig.start(p.ctx, &p.wg)
	p.mover.start(p.ctx)
	p.front.startPool(p.ctx, p)
	p.wg.Add(2)
	go func() {
		defer p.wg.Done()
		p.watch()
	}()
	go func() {
		defer p.wg.Done()
		if p.cfg.Preconnect {
			for _, b := range p.backends {
				b.preconnect(p.ctx)
			}
		}
		p.checks.loop(p.ctx)
	}()
}

// close waits for the requests in flight, then stops the pool.
func (p *pool) close() {
	<-p.requests.closing()
	p.cancel()
	p.wg.Wait()
	for _, b := range p.backends {
		b.close()
	}
	p.mig.closeFormers()
}

// abort closes every server connection, failing the requests in flight;
// later requests fail too. For a shutdown past its deadline.
func (p *pool) abort() {
	for _, b := range p.backends {
		b.close()
	}
	p.mig.closeFormers()
}

// sentinelSource is a membership source on Redis Sentinels (package
// membership/sentinel) as a pool asks it.
type sentinelSource interface {
	// Nudge asks the source again at once.
	Nudge()
	// DownAfter returns how long the Sentinels let master's primary be
	// silent before they fail it over, 0 while unknown (see
	// storeMover.migrateTimeout).
	DownAfter(master string) time.Duration
}

// askSource asks the pool's membership source again now, when it can be:
// a server failed or was demoted, and the source may know where it went.
func (p *pool) askSource() {
	if p.sentinel != nil {
		p.sentinel.Nudge()
	}
}
