package proxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/kolco-dev/kolco"
)

// sourcing are the membership sources the server's pools follow, and
// what it keeps beside them: since when each pool places as it does, and
// what the process it took over from served. A source's new version is
// served through the path of a reload (apply), under the reload's lock.
type sourcing struct {
	// mu is Server.mu, which guards the fields below (see listening.mu):
	// a version is applied, and a plan committed, under the lock a
	// reload holds, so that each sees the pools the other left.
	mu *sync.Mutex
	// byPool follow the sources of pools, by pool name; placed says
	// since when each pool places by its fingerprint.
	byPool poolSources
	placed placedSince
	// inheritedViews are the nodes the gossip pools of the process this
	// one took over from served (see Server.InheritViews); tookOver is set
	// once sockets are inherited.
	inheritedViews map[string][]kolco.Node
	tookOver       bool

	// listening is read, under mu, for what each pool serves now (its
	// listener's pool) and whether the server shuts down.
	listening *listening
	// apply prepares the running configuration with views, the versions
	// the pools on a source serve, and commits it (Server.prepare,
	// Server.commit); ctx ends the prepare. The caller holds mu.
	apply func(ctx context.Context, views map[string]*sourceView) error
	// yield takes mu from an apply for a shutdown, a handover or a reload.
	yield applyYield
	// fleet is told the sources, for the sweeps that ask them.
	fleet *sweepFleet
	certs *certRegistry
	log   *slog.Logger
	// wg is Server.wg: a shutdown waits for the sources retired.
	wg *sync.WaitGroup
}

// sourcePlan is the membership sources of a configuration being prepared:
// those kept from the running one and those started for it. commit
// installs them and retires the rest; undo stops what was started.
type sourcePlan struct {
	src     *sourcing
	cfg     *Config
	next    map[string]*poolSource // by pool name
	started []*poolSource
	retired []*poolSource
}

// prepareSourced prepares cfg as prepare does, each pool on a membership
// source served with its source's newest version it can serve. The caller
// holds mu and, after commit, calls the plan's commit.
func (s *Server) prepareSourced(ctx context.Context, cfg *Config) (*transition, *sourcePlan, error) {
	states, err := s.statesFor(cfg)
	if err != nil {
		return nil, nil, err
	}
	plan, err := s.sourcing.plan(cfg, s.cfg.Path, states)
	if err != nil {
		return nil, nil, err
	}
	views := make(map[string]*sourceView, len(plan.next))
	for name, ps := range plan.next {
		if views[name], err = ps.effective(cfg.Pools[name], s.sourcing.serving(name)); err != nil {
			plan.undo()
			return nil, nil, &ConfigError{Pool: name, Key: "membership", Err: err}
		}
	}
	t, err := s.prepare(ctx, cfg, views)
	if err != nil {
		plan.undo()
		return nil, nil, err
	}
	return t, plan, nil
}

// plan keeps the running sources cfg keeps and starts the others; a
// configuration read from no file takes its directory from runningPath,
// the running one's file; states is cfg's state file (Server.statesFor).
// The caller holds mu.
func (src *sourcing) plan(cfg *Config, runningPath string, states *stateFile) (*sourcePlan, error) {
	dir := ""
	if path := cmp.Or(cfg.Path, runningPath); path != "" {
		dir = filepath.Dir(path)
	}
	plan := &sourcePlan{src: src, cfg: cfg, next: map[string]*poolSource{}}
	for _, name := range cfg.PoolNames() {
		pc := cfg.Pools[name]
		if pc.Membership == nil {
			continue
		}
		if cur := src.byPool[name]; cur != nil && cur.keeps(keyOf(pc, dir), pc) {
			plan.next[name] = cur
			continue
		}
		var env sourceEnv
		if sn := pc.Membership.Sentinel; sn != nil && sn.TLS != nil {
			var err error
			if env.sentinelTLS, err = src.certs.sentinelTLS(sn.TLS, dir); err != nil {
				plan.undo()
				return nil, &ConfigError{Pool: name, Key: "membership", Err: err}
			}
		}
		// A gossip member may find its address held by the member it
		// replaces, and joins once that one has left: a member of the
		// process this one takes over from (at Start), or the pool's
		// running source, which a reload that starts a new one retires.
		if g := pc.Membership.Gossip; g != nil && (src.tookOver || src.byPool.gossipBinds(name, g.Bind)) {
			env.gossipInUse = addrInUse
		}
		initial, state, placeholder := src.initialNodes(name, pc, states)
		env.placeholder = placeholder
		ps, err := newPoolSource(name, pc, dir, initial, state, env, src.log)
		if err != nil {
			plan.undo()
			return nil, err
		}
		plan.next[name] = ps
		plan.started = append(plan.started, ps)
	}
	for name, ps := range src.byPool {
		if plan.next[name] != ps {
			plan.retired = append(plan.retired, ps)
		}
	}
	return plan, nil
}

// initialNodes returns the nodes a new source of the pool name starts
// from: those the pool serves now when it is on a source already (the
// source's settings changed), those the process this one took over from
// served for a gossip pool, those the state file records a store's pool
// as serving (see poolState.Served), else its configured servers. state
// is, for a history-dependent distribution, that of the placement served
// over them (nil: placed afresh). placeholder reports the last when the
// pool does not run yet: servers no source named and no pool of this
// process served (see sourceView.placeholder).
func (src *sourcing) initialNodes(name string, pc *PoolConfig, states *stateFile) (nodes []kolco.Node, state []byte, placeholder bool) {
	running := src.listening.byName
	if v := src.serving(name); v != nil {
		if l := running[name].pool.Load().place.Load().layout(); l != nil && l.settings == settingsOf(pc) && l.settings.historyDependent() {
			state = l.state()
		}
		return v.nodes, state, false
	}
	if nodes := src.inheritedViews[name]; nodes != nil && pc.Membership.Gossip != nil {
		return nodes, nil, false
	}
	if running[name] == nil {
		nodes, state, err := states.servedFor(name, pc)
		if err != nil {
			src.log.Warn("the state file's record of the placement served is not taken: keys placed afresh over its servers until the source's first version",
				"pool", name, "err", err)
		}
		if nodes != nil {
			src.log.Info("membership: starting from the servers the state file records the store as serving, until the source's first version",
				"pool", name, "servers", serverList(nodes), "restored", state != nil)
			return nodes, state, false
		}
	}
	return pc.nodes(), nil, running[name] == nil
}

// servedFor returns the servers the state file records the store pool
// name of cfg, on a membership source, as serving, and the state of the
// placement over them for a history-dependent distribution; nil when it
// records none. The error says why a recorded state is not taken: it does
// not restore the fingerprint recorded beside it, or is of other
// placement settings.
func (st *stateFile) servedFor(name string, cfg *PoolConfig) ([]kolco.Node, []byte, error) {
	if st == nil || st.Pools[name] == nil || !cfg.Store.Enabled || cfg.Membership == nil || len(st.Pools[name].Served) == 0 {
		return nil, nil, nil
	}
	ps := st.Pools[name]
	nodes := make([]kolco.Node, len(ps.Served))
	for i, n := range ps.Served {
		nodes[i] = kolco.Node{ID: n.ID, Weight: n.Weight, Zone: n.Zone, Addr: n.Addr}
	}
	if ps.ServedState == nil || isTwemproxy(cfg) || !settingsOf(cfg).historyDependent() {
		return nodes, nil, nil
	}
	if ps.settings() != settingsOf(cfg) {
		return nodes, nil, fmt.Errorf("%s records the pool with other placement settings (%s)", st.path, ps.Distribution)
	}
	l, err := newLayout(settingsOf(cfg), nodes, ps.ServedState)
	switch {
	case err != nil:
		return nodes, nil, fmt.Errorf("%s: the placement it records as served: %w", st.path, err)
	case l.fingerprint != ps.ServedFingerprint:
		return nodes, nil, fmt.Errorf("%s: the placement it records as served restores to fingerprint %s, the file records %s", st.path, l.fingerprint, ps.ServedFingerprint)
	}
	return nodes, ps.ServedState, nil
}

// poolSources are the membership sources a server follows, by pool name.
type poolSources map[string]*poolSource

// gossipBinds reports whether the pool name's source is a gossip member
// bound to bind.
func (srcs poolSources) gossipBinds(name, bind string) bool {
	if ps := srcs[name]; ps != nil {
		if g := ps.key.membership.Gossip; g != nil && g.Bind == bind {
			return true
		}
	}
	return false
}

// serving returns the source's version the pool name serves, or nil. The
// caller holds mu.
func (src *sourcing) serving(name string) *sourceView {
	if l := src.listening.byName[name]; l != nil {
		return l.pool.Load().members
	}
	return nil
}

// views returns the source's versions the pools serve now, by pool name,
// as serving says each pool's.
func (srcs poolSources) views(serving func(name string) *sourceView) map[string]*sourceView {
	views := map[string]*sourceView{}
	for name := range srcs {
		views[name] = serving(name)
	}
	return views
}

// pending returns the pools on a source other than gossip whose source
// has given no version yet, or gave one they can serve and do not serve
// yet (as serving says), sorted.
func (srcs poolSources) pending(serving func(name string) *sourceView) []string {
	var pending []string
	for name, ps := range srcs {
		if ps.key.membership.Gossip != nil {
			continue
		}
		newest, served := ps.view.Load(), serving(name)
		if newest == nil || newest.revision == 0 || newest.err == nil && (served == nil || served.revision < newest.revision) {
			pending = append(pending, name)
		}
	}
	slices.Sort(pending)
	return pending
}

// effective returns the version of the source the pool configured as
// base serves: the newest when the pool can serve it, else the one it
// serves; the error says why it can serve neither.
func (ps *poolSource) effective(base *PoolConfig, serving *sourceView) (*sourceView, error) {
	v := ps.view.Load()
	err := v.check(base)
	switch {
	case err == nil:
		return v, nil
	case serving != nil:
		return serving, nil
	}
	return nil, fmt.Errorf("revision %d: %w", v.revision, err)
}

// commit installs the plan's sources, starts those started for it and
// stops those it retires. The caller holds mu, after committing the
// transition.
func (p *sourcePlan) commit() {
	src := p.src
	for name, ps := range p.next {
		ps.base = p.cfg.Pools[name]
	}
	src.byPool = p.next
	src.fleet.setSources(p.next)
	for _, ps := range p.started {
		ps.start(src.applySource)
	}
	for _, ps := range p.retired {
		// Not here: its loop may be waiting for mu.
		src.wg.Add(1)
		go func() {
			defer src.wg.Done()
			ps.close()
		}()
	}
	src.placed = src.placed.noted(src.listening.byName)
}

// undo stops the sources started for the plan; their loops never ran.
func (p *sourcePlan) undo() {
	for _, ps := range p.started {
		ps.close()
	}
}

// applySource serves the newest view of ps in its pool, through the path
// of a reload of that pool alone, or records why it cannot. A shutdown, a
// handover or a reload that comes meanwhile ends its prepare (see
// applyYield): the view is refused for now and tried again by the source's
// loop, unless the server is closed or hands over, when the process that
// takes over serves its own source's newest version.
func (src *sourcing) applySource(ps *poolSource) {
	src.mu.Lock()
	defer src.mu.Unlock()
	if src.listening.closed || src.listening.handover != nil || src.byPool[ps.name] != ps {
		return
	}
	v := ps.view.Load()
	serving := src.serving(ps.name)
	if serving == nil {
		return
	}
	if v == serving {
		// Served already, by a reload that came first.
		ps.setRefused(v, nil)
		return
	}
	err := v.check(ps.base)
	unservable := err != nil
	if err == nil {
		views := src.byPool.views(src.serving)
		views[ps.name] = v
		old := src.listening.byName[ps.name].pool.Load()
		err = src.yield.run(context.Background(), func(ctx context.Context) error { return src.apply(ctx, views) })
		if err == nil {
			if l := src.listening.byName[ps.name]; l != nil {
				l.pool.Load().noteRepoints(old)
				l.placed()
			}
			src.placed = src.placed.noted(src.listening.byName)
			ps.applied.Add(1)
			removed, added, updated := describeChange(kolco.Diff(serving.nodes, v.nodes))
			src.log.Info("membership: version applied", "pool", ps.name, "source", ps.desc, "revision", v.revision,
				"fingerprint", v.fingerprint, "removed", removed, "added", added, "updated", updated)
		}
	}
	ps.setRefused(v, err)
	if unservable && v.revision > 0 {
		// The source answered, with nothing the pool can serve: its
		// configured servers serve meanwhile, as they would after an
		// unanswered wait. A version that could not be applied yet - a
		// server it keeps not listed, one it adds not emptied - is tried
		// again, and the pool waits for it as for an unanswered source:
		// its configured servers, which no source named, placed the
		// keys of a fleet that had moved on (a fault schedule's seed
		// 877: a proxy killed and started again answered for two
		// seconds from them, 2 stale reads).
		if l := src.listening.byName[ps.name]; l != nil {
			l.placed()
		}
	}
}

// errApplyYielded is why a source's version, or a failed reload tried
// again, is not served yet when a shutdown, a handover or a reload ended
// its prepare.
var errApplyYielded = errors.New("a shutdown, a handover or a reload came first; tried again")

// applyYield lets a shutdown, a handover or a reload take the server's
// lock from a source's version being applied, or from a failed reload
// tried again (see reloadRetries). An apply holds the lock
// through its prepare, which may list or empty servers over a slow link
// for as long as the link takes, and the process's shutdown, handover and
// reloads would wait as long (TestHandOverDuringSlowApply). Preparing
// outside the lock
// and committing under it was the alternative; but a prepare reads the
// running pools and listeners the lock guards, and two prepares of one
// pool at once would share the pool they replace, whose figures, moves
// and outages its successor takes over. Ending the prepare keeps one
// prepare at a time: the caller that needs the lock cancels the apply
// under way and keeps any other from starting until it holds the lock.
type applyYield struct {
	mu      sync.Mutex
	waiting int                // callers on their way to the server's lock
	cancel  context.CancelFunc // the apply under way; nil when none
}

// lockFirst takes mu ahead of a source's version being applied or a
// failed reload tried again, ending its prepare (see applyYield): for a
// shutdown, a handover or a reload, which no slow server may hold up.
func (src *sourcing) lockFirst() {
	release := src.yield.take()
	src.mu.Lock()
	release()
}

// take ends the apply under way, if any, and keeps applies from starting
// until the returned release is called, once the caller holds the
// server's lock.
func (y *applyYield) take() (release func()) {
	y.mu.Lock()
	y.waiting++
	if y.cancel != nil {
		y.cancel()
	}
	y.mu.Unlock()
	return func() {
		y.mu.Lock()
		y.waiting--
		y.mu.Unlock()
	}
}

// run runs apply, whose caller holds the server's lock, with a context
// that ends with parent and when a caller waits to take the lock; the
// error is errApplyYielded when apply failed for that.
func (y *applyYield) run(parent context.Context, apply func(context.Context) error) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	y.mu.Lock()
	if y.waiting > 0 {
		cancel()
	} else {
		y.cancel = cancel
	}
	y.mu.Unlock()
	err := apply(ctx)
	y.mu.Lock()
	y.cancel = nil
	y.mu.Unlock()
	if err != nil && ctx.Err() != nil && parent.Err() == nil {
		return errApplyYielded
	}
	return err
}

// stop stops following every source; for Shutdown, after the
// listening side is closed. The caller holds mu; it closes the sources
// it returns once mu is released, since their loops may be waiting for
// it.
func (src *sourcing) stop() poolSources {
	sources := src.byPool
	src.byPool = nil
	src.fleet.setSources(nil)
	return sources
}

// placedAt is when a pool began placing keys by a fingerprint.
type placedAt struct {
	fingerprint string
	at          time.Time
}

// placedSince says since when each pool places keys by its fingerprint,
// by pool name.
type placedSince map[string]placedAt

// noted returns when each pool of listeners began placing by its
// fingerprint: as placed says for a pool whose fingerprint has not
// changed, now for the others.
func (placed placedSince) noted(listeners map[string]*listener) placedSince {
	now := time.Now()
	out := make(placedSince, len(listeners))
	for name, l := range listeners {
		fp := l.pool.Load().fingerprint()
		if was, ok := placed[name]; ok && was.fingerprint == fp {
			out[name] = was
			continue
		}
		out[name] = placedAt{fingerprint: fp, at: now}
	}
	return out
}

// fingerprint returns the fingerprint of the pool's configured placement:
// kolco.Fingerprint of a kolco distribution's layout, or for ketama and
// modula the digest of what nutcracker places by. Local health is not in
// it.
func (p *pool) fingerprint() string {
	if l := p.place.Load().layout(); l != nil {
		return l.fingerprint
	}
	if m := p.members; m != nil {
		return m.fingerprint
	}
	return twemproxyFingerprint(p.cfg.Distribution, p.cfg.Hash, p.cfg.HashTag, nodesOf(p.backends))
}
