package proxy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
)

// Reload applies a new configuration without dropping clients:
// pools whose settings did not change are kept as they are (connections,
// health); changed pools are rebuilt and serve every request read from then
// on, while requests in flight finish on the old pool, which is closed
// after them. A pool whose listen address changed moves to the new
// address; its open client connections stay and use the new pool. A
// removed pool stops listening and its clients are closed once their
// requests in flight are answered.
//
// The new pools and listeners are prepared first, beside the running
// ones; only when all of them are ready, and ctx is not done, are they
// swapped in. On error nothing changes: the error is a [*ConfigError] for
// a configuration that does not validate or a placement that cannot be
// built, a listen error, or ctx's error. Settings left at their zero value
// are read as their defaults.
//
// Limits read when a client connects (max_value_size, max_keys,
// max_pending) apply to new connections; metrics_listen needs a restart.
// TLS files that changed are read again (they are also checked every
// second), for the next handshakes.
//
// A reload supersedes a failed one still to be tried again (see
// [Server.ReloadFile]).
func (s *Server) Reload(ctx context.Context, cfg *Config) error {
	s.sourcing.lockFirst()
	defer s.mu.Unlock()
	s.retries.supersede()
	return s.reload(ctx, cfg)
}

// reload is Reload; the caller holds mu.
func (s *Server) reload(ctx context.Context, cfg *Config) error {
	if s.listening.closed {
		return ErrServerClosed
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	s.certs.reloadAll(s.log) // SIGHUP reads changed TLS files at once
	if _, err := s.certs.peerClient(&cfg.Global, s.cfg.dir()); err != nil {
		return err
	}
	t, sources, err := s.prepareSourced(ctx, cfg.WithDefaults())
	if err != nil {
		return err
	}
	old := s.cfg.WithDefaults()
	s.commit(t)
	sources.commit()
	s.met.reloads.Inc()
	s.log.Info("configuration reloaded", "pools", len(cfg.Pools))
	logChanges(s.log, old, t.cfg)
	return nil
}

// transition is a configuration prepared beside the running one: for each
// pool that is new or changed, a new pool started (its health loop
// running, its connections opening) and, when its address is new, a
// listener open. No client sees any of it yet: commit swaps it in and
// retires what it replaces; undo closes it and leaves the server as it
// was.
type transition struct {
	cfg   *Config
	pools []poolChange // in pool name order
}

// poolChange is one pool of a transition.
type poolChange struct {
	name string
	cur  *listener // the pool's listener now; nil for a new pool
	next *pool     // the pool that replaces cur's; nil when unchanged
	ln   *listener // a new listener, when the pool is new or moves
	// remode applies next's socket mode to cur's socket file on commit:
	// the listener is kept when only the mode changed.
	remode bool
}

// prepare builds and starts the pools of cfg that are new or changed and
// opens the listeners they need; views are the versions of their
// membership sources the pools on one serve, by pool name. The caller
// holds mu.
//
// A configuration read from no file (ParseConfig) is taken as the running
// one's file, for the default place of the state file. A pool that starts
// takes its placement from its record in the state file, if any; the file
// is written with the prepared placements before they serve.
func (s *Server) prepare(ctx context.Context, cfg *Config, views map[string]*sourceView) (*transition, error) {
	if cfg.Path == "" && s.cfg != nil {
		cfg.Path = s.cfg.Path
	}
	states, err := s.statesFor(cfg)
	if err != nil {
		return nil, err
	}
	t := &transition{cfg: cfg}
	for _, name := range cfg.PoolNames() {
		ch, err := s.preparePool(ctx, poolSpec{name: name, cfg: cfg.Pools[name], front: frontOf(cfg.Pools[name]),
			members: views[name], log: s.log, met: s.met}, states)
		if err != nil {
			t.undo()
			return nil, err
		}
		t.pools = append(t.pools, ch)
	}
	if err := ctx.Err(); err != nil {
		t.undo()
		return nil, err
	}
	if err := writeState(t.cfg.statePath(), t.records(), s.log); err != nil {
		t.undo()
		return nil, err
	}
	return t, nil
}

// preparePool prepares the pool of spec of the new configuration; on
// error nothing of it is left running. A pool that replaces a running one
// follows its placement (see pool.follow); a new one starts from its
// record in states, if any.
func (s *Server) preparePool(ctx context.Context, spec poolSpec, states *stateFile) (poolChange, error) {
	name, pc := spec.name, spec.cfg
	ch := poolChange{name: name, cur: s.listening.byName[name]}
	if cur := ch.cur; cur != nil && cur.pool.Load().members == spec.members && reflect.DeepEqual(*cur.pool.Load().cfg, *pc) {
		return ch, nil
	}
	if ch.cur != nil && ch.cur.pool.Load().front != spec.front {
		// The clients connected speak the pool's protocol.
		return ch, &ConfigError{Pool: name, Key: "redis", Err: errors.New("cannot change on reload; restart the proxy, or give the pool a new name")}
	}
	h, err := spec.history(ch.cur, states)
	if err != nil {
		return ch, err
	}
	from, prev, fromPlaceholder := h.from, h.prev, h.fromPlaceholder
	afresh, afreshMark := h.afresh, h.afreshMark
	p, err := newPoolAfter(spec, from, prev)
	if err != nil {
		return ch, err
	}
	p.takeTraffic(ch.replaced())
	if err := s.certs.forPool(p, s.cfg.dir()); err != nil {
		return ch, err
	}
	if len(h.moving) > 0 {
		if err := p.mover.resume(h.moving, h.movePaused); err != nil {
			return ch, &ConfigError{Pool: name, Key: GlobalKey + ".state_file", Err: fmt.Errorf("%w: the store's move it records: %w", ErrBadStateFile, err)}
		}
	}
	p.fleet = &s.fleet
	p.placing.saveState = func() { go s.rewriteState() }
	if ch.cur != nil {
		if err := succeed(ctx, p, ch.cur.pool.Load(), fromPlaceholder); err != nil {
			return ch, err // p is not started yet: nothing of it to stop
		}
	}
	p.start()
	switch {
	case afresh != "":
		p.checkAfresh(afresh)
	case afreshMark != nil:
		p.resumeAfresh(afreshMark)
	case ch.cur != nil && p.stats.stateMissing.Load() != nil:
		p.recheckAfresh(afreshRecheck)
	}
	ch.next = p
	if ch.cur != nil && sameAddress(ch.cur.pool.Load().cfg.Listen, pc.Listen) && tlsListen(ch.cur.pool.Load().cfg) != tlsListen(pc) {
		p.close()
		return ch, &ConfigError{Pool: name, Key: "tls.listen", Err: errors.New("cannot change on reload while listen stays: restart the proxy, or move listen too")}
	}
	if ch.cur != nil && sameAddress(ch.cur.pool.Load().cfg.Listen, pc.Listen) {
		ch.remode = true
		return ch, nil
	}
	if ch.ln, err = s.listening.listen(ctx, name, pc.Listen, p); err != nil {
		p.close()
		return ch, err
	}
	return ch, nil
}

// succeed readies p, not started yet, to replace old: it keeps old's
// figures and its servers' down marks (pool.inherit), empties the servers
// it adds (unless it is placed afresh, fromPlaceholder, as at a start) and
// lets the front sweep before p serves.
func succeed(ctx context.Context, p, old *pool, fromPlaceholder bool) error {
	p.retiring, p.lateWrites = old.retiring, old.lateWrites
	p.stats = old.stats // figures survive a reload
	if err := p.inherit(old); err != nil {
		return err
	}
	if !fromPlaceholder { // placed afresh, as at a start: no server was added
		if err := p.emptyAdded(ctx, old); err != nil {
			return err
		}
	}
	return p.front.presweep(ctx, old, p)
}

// poolHistory is what a new pool follows from: the layout and placement
// of the pool it replaces, or at a start the state file's.
type poolHistory struct {
	from *layout
	prev *placement
	// afresh says why a new pool of a history-dependent distribution
	// starts without its history; afreshMark is the state file's mark of
	// one that did, still missing keys.
	afresh     string
	afreshMark *StateMissing
	// moving are the placements a store's move follows, from the state
	// file.
	moving []movePlacement
	// movePaused is set when the state file records that move paused.
	movePaused bool
	// fromPlaceholder: the pool replaced ran on servers no source named,
	// and nothing of them is read.
	fromPlaceholder bool
}

// history returns what spec's pool follows from: cur's placement on a
// reload, the state file's at a start.
func (spec *poolSpec) history(cur *listener, states *stateFile) (poolHistory, error) {
	var h poolHistory
	if cur != nil {
		h.prev = cur.pool.Load().place.Load()
		h.from = h.prev.layout()
		if h.fromPlaceholder = spec.replacesPlaceholder(cur.pool.Load()); h.fromPlaceholder {
			h.prev = nil
		}
		return h, nil
	}
	name, pc := spec.name, spec.cfg
	var err error
	if h.from, err = states.layoutFor(name, pc, spec.log); err != nil {
		return h, &ConfigError{Pool: name, Key: GlobalKey + ".state_file", Err: err}
	}
	if h.from == nil {
		h.afresh = states.missing(name, pc)
	} else {
		h.afreshMark = states.afreshFor(name)
	}
	h.moving = states.movingFor(name, pc)
	h.movePaused = states.movePausedFor(name)
	return h, nil
}

// replacesPlaceholder reports whether cur, the pool spec replaces, ran on
// its configured servers before its source's first version (see
// sourceView.placeholder): spec's pool is then placed afresh.
func (spec *poolSpec) replacesPlaceholder(cur *pool) bool {
	if cur.members == nil || !cur.members.placeholder {
		return false
	}
	if spec.members != nil && !spec.members.placeholder {
		spec.log.Info("membership: the source's first version replaces the configured servers: keys placed by it afresh, nothing read from those servers",
			"pool", spec.name)
	}
	return true
}

// undo closes what prepare opened.
func (t *transition) undo() {
	for _, ch := range t.pools {
		if ch.ln != nil {
			ch.ln.close()
		}
		if ch.next != nil {
			ch.next.close()
		}
	}
}

// commit swaps the prepared pools and listeners in and retires the pools
// they replace, and the pools the configuration removed, once their
// requests in flight are done. It cannot fail. The caller holds mu.
func (s *Server) commit(t *transition) {
	kept := make(map[string]bool, len(t.pools))
	for _, ch := range t.pools {
		kept[ch.name] = true
	}
	for name, l := range s.listening.byName {
		if !kept[name] {
			// Removed: its clients end once their requests in flight
			// are answered, and its pool closes after them.
			s.listening.retire(l)
			s.retirePool(l.pool.Load())
			delete(s.listening.byName, name)
		}
	}
	for _, ch := range t.pools {
		s.commitPool(ch)
	}
	s.cfg = t.cfg
	s.config.Store(t.cfg)
	if client, err := s.certs.peerClient(&t.cfg.Global, s.cfg.dir()); err == nil {
		s.fleet.setPeers(peerAddrs(&t.cfg.Global), client)
	} else {
		s.log.Error("reload: the peers' authority does not load; they are asked as before", "err", err)
	}
	s.budget.setLimit(t.cfg.Global.BufferLimit)
	if s.memory {
		limitMemory(t.cfg.Global.BufferLimit)
	}
}

// replaced returns the pool the change replaces, nil for a new one.
func (ch poolChange) replaced() *pool {
	if ch.cur == nil {
		return nil
	}
	return ch.cur.pool.Load()
}

func (s *Server) commitPool(ch poolChange) {
	if ch.next == nil {
		return
	}
	if ch.cur != nil {
		ch.cur.pool.Load().mig.haltSweep() // it judges by a placement about to be replaced
		// The new pool's move supersedes its.
		ch.cur.pool.Load().mover.halt()
		ch.next.catchUp(ch.cur.pool.Load())
		old := ch.cur.pool.Swap(ch.next)
		ch.next.trafficChanged(old)
		s.retirePool(old)
		if ch.remode {
			if err := remode(ch.next.cfg.Listen); err != nil {
				s.log.Error("reload: socket mode", "pool", ch.name, "err", err)
			}
		}
		if ch.ln != nil {
			// Moved: the old address's clients stay, and share the pool
			// with the new address's from now on, through every reload.
			ch.cur.close()
			ch.ln.pool = ch.cur.pool
		}
	}
	if ch.ln != nil {
		s.listening.byName[ch.name] = ch.ln
		s.listening.acceptIn(ch.ln)
	}
}

// retirePool closes p once its requests in flight are done, counted
// meanwhile among the retiring pools of the pool that replaced it. The
// caller holds mu, which the membership status is read under: a status
// never shows the new pool without its predecessor still in flight.
func (s *Server) retirePool(p *pool) {
	p.retiring.Add(1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		p.close()
		p.retiring.Add(-1)
	}()
}

// ReloadFile reads, parses and applies the configuration file at path, as
// Reload does. Whatever fails - reading, parsing, validating, building the
// pools, listening - is logged, counted in
// kolco_proxy_reload_failures_total and returned, and the running
// configuration stays. A failure that may pass - a server that cannot be
// reached or answers too late, while the change must empty it or list its
// keys - is tried again by itself, 1 s later and twice as long after each
// failure in a row, up to every 30 s, until it is applied, fails for a
// reason that does not pass (a [*ConfigError]), or a newer reload
// supersedes it; kolco_proxy_reload_pending is 1 meanwhile.
func (s *Server) ReloadFile(ctx context.Context, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		err = &ConfigError{Err: err}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.retries.supersede()
		s.retries.failed(nil, err)
		return err
	}
	return s.ReloadData(ctx, path, data)
}

// ReloadData parses data, the contents of the configuration file named
// source, and applies it as [Server.ReloadFile] does: for a caller that
// read the file itself, such as one that waits for a file being written
// to settle.
func (s *Server) ReloadData(ctx context.Context, source string, data []byte) error {
	cfg, err := ParseConfig(data)
	s.sourcing.lockFirst()
	defer s.mu.Unlock()
	s.retries.supersede()
	if err != nil {
		err = fmt.Errorf("%s: %w", source, err)
		cfg = nil
	} else {
		err = s.reload(ctx, cfg)
	}
	if err != nil {
		s.retries.failed(cfg, err)
	}
	return err
}

// Config returns the configuration the server runs: the one it was
// started with, or the last one a reload applied. It does not wait for a
// reload or a source's version being applied.
func (s *Server) Config() *Config { return s.config.Load() }

// tlsListen returns the pool's TLS address beside listen, or "".
func tlsListen(pc *PoolConfig) string {
	if pc.TLS == nil {
		return ""
	}
	return pc.TLS.Listen
}
