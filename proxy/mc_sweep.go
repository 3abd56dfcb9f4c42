package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"sync/atomic"
	"time"

	"github.com/kolco-dev/kolco/internal/bytestr"
	"github.com/kolco-dev/kolco/internal/metadump"
	"github.com/kolco-dev/kolco/proxy/memcache"
)

// The sweep. Once a migration's window has closed, the copies a change
// left on servers that no longer own them are orphans: no read reaches
// them, but a later change that makes their server the owner again would
// serve them, older than the writes made since. The sweep lists each of
// the pool's exclusive servers (sweep.exclusive) with "lru_crawler
// metadump all", keeps the keys the server does not own under the
// placement (neither their server nor, with a server down under rehash,
// the one standing in for it), and deletes them with the CAS value
// listed, "md <key> C<cas>": a value written since has another CAS value
// and stays.
//
// Deletes go in batches at sweep.rate a second. Each batch is judged
// against the placement published when it is sent, under sweepMu, which
// a change takes to publish: no delete is judged by one placement and
// made under the next. A change, the pool's close and a reload's halt
// stop the sweep between batches; it is safe to cut anywhere, since each
// delete stands alone. A server shared with other pools, or with other
// proxies' pools, is never swept: their keys would look orphaned.

// maxOrphans bounds the orphans one pass of a server holds; a server with
// more is swept in several passes.
const maxOrphans = 100_000

// errMigrationChanged stops a sweep when a newer change is published.
var errMigrationChanged = errors.New("a newer change replaced the migration")

// errEnough stops a listing once a pass holds maxOrphans.
var errEnough = errors.New("enough orphans for one pass")

// orphan is a key listed on a server that does not own it.
type orphan struct {
	key string
	cas uint64
}

// mcSweep is a memcached pool's sweep: the presweep before a change, the
// sweep after its window, and what they keep. It is made with what it
// needs of its pool (sweepOf) - the pool's name, configuration, log and
// servers, its placement and its windows (whose lock a change publishes
// under, whose context halts the sweep, whose fleet it waits for, whose
// migration it settles and whose figures it counts in) - and reads
// nothing else of it. The front keeps it as the pool's front state.
type mcSweep struct {
	name     string
	cfg      *PoolConfig
	log      *slog.Logger
	backends []*backend
	place    *atomic.Pointer[placement]
	mig      *migrations

	// clean are the addresses of the servers swept since the last change
	// that moved keys: they hold no orphaned copy (see presweep). A pool
	// that replaces another without moving a key keeps them; at a start
	// none is known. Guarded by mig.sweepMu.
	clean map[string]bool
}

// sweepOf returns p's sweep, made at its first use: by a presweep before
// p serves, or by the sweep after a window.
func sweepOf(p *pool) *mcSweep {
	if s, ok := p.frontState.Load().(*mcSweep); ok {
		return s
	}
	p.frontState.CompareAndSwap(nil, &mcSweep{name: p.name, cfg: p.cfg, log: p.log, backends: p.backends, place: &p.place, mig: p.mig})
	return p.frontState.Load().(*mcSweep)
}

// after sweeps the pool's exclusive servers after m's window and
// settles m once every one of them was swept or failed; it returns early,
// leaving m to the loop, when a newer change is published, the pool closes
// or a reload halts the sweep.
func (s *mcSweep) after(m *migration) {
	st := s.mig.stats
	ctx := s.mig.sweepCtx
	if ctx.Err() != nil || !s.mig.placementAgreed(ctx, m) {
		return
	}
	st.sweeping.Set(1)
	defer st.sweeping.Set(0)
	var done []string // addresses swept: servers of one address are one server
	for _, b := range s.backends {
		if !s.cfg.exclusive(b.node) || b.health.isDown() || slices.Contains(done, b.addr) {
			continue
		}
		done = append(done, b.addr)
		err := s.sweepServer(ctx, m, b)
		switch {
		case err == nil:
			s.markClean(m, b.addr)
		case ctx.Err() != nil || errors.Is(err, errMigrationChanged):
			return
		default:
			st.addServer(st.m.sweepErrs, &st.errors, b.addr, 1)
			s.log.Warn("sweep of a server failed; its orphaned copies stay until the next change", "server", b.name(),
				"addr", b.addr, "err", err)
		}
	}
	s.mig.settle(m)
	s.log.Info("sweep done", "servers", len(done), "listed", st.listed.Load(), "deleted", st.deleted.Load(), "kept", st.kept.Load())
}

// markClean records that the server at addr holds no orphan, swept while
// m's placement is the pool's.
func (s *mcSweep) markClean(m *migration, addr string) {
	s.mig.sweepMu.Lock()
	defer s.mig.sweepMu.Unlock()
	if s.place.Load().mig != m {
		return // a change since: what it moved is not swept
	}
	if s.clean == nil {
		s.clean = map[string]bool{}
	}
	s.clean[addr] = true
}

// The presweep. The sweep after a change removes the copies it left on
// servers that no longer own them, but a newer change may come first -
// while the window is open, before the sweep is done, or after a restart
// or a handover, whose process knows of no earlier window - and give some
// of those keys back to the server holding the old copy, which would then
// serve it, older than the writes made since (found by the fault schedule:
// modula with warm changes, a server added, the proxy started again, a key
// written, the server removed). So before a change that moves keys
// replaces a pool, each server of both that is not known clean is listed,
// and its copies of the keys the change gives it - keys the placement now
// does not give it - are deleted by their listed CAS values; a value
// written since stays. Only those wait for the change: the rest are swept
// after its window, as always.

// presweep removes, from the servers of s's pool that next's keeps, the
// orphaned copies of keys next's placement gives them (see above). The
// error is a server's that could not be listed or swept: the change is
// not applied.
func (s *mcSweep) presweep(ctx context.Context, next *mcSweep) error {
	cur, nextPl := s.place.Load(), next.place.Load()
	if len(s.cfg.Sweep.Exclusive) == 0 || cur.sig == nextPl.sig {
		s.mig.sweepMu.RLock()
		next.clean = maps.Clone(s.clean)
		s.mig.sweepMu.RUnlock()
		return nil
	}
	s.mig.sweepMu.RLock()
	clean := maps.Clone(s.clean)
	s.mig.sweepMu.RUnlock()
	var done []string
	for _, b := range s.backends {
		if !s.cfg.exclusive(b.node) || !next.cfg.exclusive(b.node) || b.health.isDown() || clean[b.addr] ||
			slices.Contains(done, b.addr) || !next.has(b.addr) {
			continue
		}
		done = append(done, b.addr)
		if err := s.presweepServer(ctx, b, nextPl); err != nil {
			return fmt.Errorf("pool %s: server %s may hold copies of keys the change gives it, older than what was written since; removing them failed: %w",
				s.name, b.addr, err)
		}
	}
	if len(done) > 0 {
		s.log.Info("servers swept of the old copies of keys the change gives them", "servers", len(done))
	}
	return nil
}

// has reports whether the pool has a server at addr.
func (s *mcSweep) has(addr string) bool {
	return slices.ContainsFunc(s.backends, func(b *backend) bool { return b.addr == addr })
}

// presweepServer lists b and deletes its copies of keys pl, the placement
// to come, gives it and the pool's does not, trying again when a change of
// health replaces the pool's placement meanwhile.
func (s *mcSweep) presweepServer(ctx context.Context, b *backend, pl *placement) error {
	for attempt := 1; ; attempt++ {
		m := s.place.Load().mig
		gained, err := s.listGained(ctx, b, pl)
		if err != nil {
			return err
		}
		// At the servers' speed, not the sweep's rate: the change waits,
		// and these are only the keys it gives back.
		_, err = s.deleteOrphans(ctx, m, b, gained, 0)
		if !errors.Is(err, errMigrationChanged) || attempt == 3 {
			return err
		}
	}
}

// listGained lists b's items and returns those of keys pl gives b and the
// pool's placement does not.
func (s *mcSweep) listGained(ctx context.Context, b *backend, pl *placement) ([]orphan, error) {
	var sc routeScratch
	cur := s.place.Load()
	var gained []orphan
	err := metadump.ListDial(ctx, b.dialSweep, func(it metadump.Item) error {
		key := bytestr.Of(it.Key)
		if !cur.owns(b, key, &sc) && pl.owns(b, key, &sc) {
			gained = append(gained, orphan{it.Key, it.Cas})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing its keys: %w", err)
	}
	return gained, nil
}

// heldKeys lists b's items and returns the keys of those keep reports
// true for: a returning server's copies of keys a change gave it while it
// was out, which the presweep could not reach (see outages.sweepGained).
func (memcacheFront) heldKeys(ctx context.Context, b *backend, keep func(key []byte) bool) ([]string, error) {
	var keys []string
	err := metadump.ListDial(ctx, b.dialSweep, func(it metadump.Item) error {
		if keep(bytestr.Of(it.Key)) {
			keys = append(keys, it.Key)
		}
		return nil
	})
	return keys, err
}

// sweepServer sweeps one server, in passes of at most maxOrphans, until a
// pass deletes nothing more.
func (s *mcSweep) sweepServer(ctx context.Context, m *migration, b *backend) error {
	for {
		orphans, more, err := s.listOrphans(ctx, b)
		if err != nil {
			return err
		}
		deleted, err := s.deleteOrphans(ctx, m, b, orphans, s.cfg.Sweep.Rate)
		if err != nil || !more || deleted == 0 {
			return err
		}
	}
}

// listOrphans lists b's items and returns those of keys b does not own,
// at most maxOrphans (more is then set).
func (s *mcSweep) listOrphans(ctx context.Context, b *backend) (orphans []orphan, more bool, err error) {
	st := s.mig.stats
	var sc routeScratch
	pl := s.place.Load()
	listed := 0
	err = metadump.ListDial(ctx, b.dialSweep, func(it metadump.Item) error {
		listed++
		if pl.owns(b, bytestr.Of(it.Key), &sc) {
			return nil
		}
		orphans = append(orphans, orphan{it.Key, it.Cas})
		if len(orphans) == maxOrphans {
			return errEnough
		}
		return nil
	})
	st.addServer(st.m.listed, &st.listed, b.addr, listed)
	st.addServer(st.m.orphans, &st.orphans, b.addr, len(orphans))
	if errors.Is(err, errEnough) {
		return orphans, true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("listing its keys: %w", err)
	}
	return orphans, false, nil
}

// owns reports whether b owns key under pl: b is the key's server (with
// replicas, one of its copies) or, with its server down under rehash, the
// one standing in for it. With no servers to judge by, it owns every key.
func (pl *placement) owns(b *backend, key []byte, sc *routeScratch) bool {
	if len(pl.servers) == 0 {
		return true
	}
	if pl.replicas > 1 {
		sc.idx, sc.nodes = pl.copies(sc.idx[:0], sc.nodes, key)
		for _, i := range sc.idx {
			if pl.servers[i].addr == b.addr {
				return true
			}
		}
		return false
	}
	if pl.servers[pl.pick.Index(key)].addr == b.addr {
		return true
	}
	o := pl.route(key, false, sc)
	return len(o) > 0 && o[0].addr == b.addr
}

// deleteOrphans deletes orphans from b, by the CAS values listed, in
// batches at rate a second (0: as fast as b answers), each judged against
// the placement published when it is sent. It returns how many it deleted.
func (s *mcSweep) deleteOrphans(ctx context.Context, m *migration, b *backend, orphans []orphan, rate int) (int, error) {
	if len(orphans) == 0 {
		return 0, nil
	}
	timeout := s.cfg.Timeout
	conn, err := b.dialOwn(ctx, timeout)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	rr := memcache.NewReplyReader(conn, 0)
	batch := 100
	if rate > 0 {
		batch = max(1, min(100, rate/10))
	}
	deleted := 0
	var buf, keys []byte
	var reply []byte
	for len(orphans) > 0 {
		start := time.Now()
		n := min(batch, len(orphans))
		del, err := s.deleteBatch(ctx, m, b, conn, rr, orphans[:n], &buf, &keys, &reply)
		deleted += del
		if err != nil {
			return deleted, err
		}
		orphans = orphans[n:]
		if rate == 0 {
			continue
		}
		if err := pause(ctx, time.Duration(n)*time.Second/time.Duration(rate)-time.Since(start)); err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}

// deleteBatch deletes one batch of orphans from b on conn, under sweepMu:
// a key b owns again under the placement now is kept.
func (s *mcSweep) deleteBatch(ctx context.Context, m *migration, b *backend, conn net.Conn, rr *memcache.ReplyReader,
	batch []orphan, buf, keys, reply *[]byte) (int, error) {
	st := s.mig.stats
	s.mig.sweepMu.RLock()
	defer s.mig.sweepMu.RUnlock()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	pl := s.place.Load()
	if pl.mig != m {
		return 0, errMigrationChanged
	}
	var sc routeScratch
	*buf = (*buf)[:0]
	sent, kept := 0, 0
	for _, o := range batch {
		key := bytestr.Of(o.key)
		tok, b64, ok := memcache.KeyToken((*keys)[:0], key)
		if !ok || pl.owns(b, key, &sc) {
			kept++
			continue
		}
		if b64 {
			*keys = tok[:0] // keep the buffer; a plain tok is the key itself
		}
		*buf = memcache.AppendMetaDelete(*buf, tok, b64, o.cas)
		sent++
	}
	deleted := 0
	if sent > 0 {
		if err := conn.SetDeadline(time.Now().Add(s.cfg.Timeout)); err != nil {
			return 0, err
		}
		if _, err := conn.Write(*buf); err != nil {
			return 0, err
		}
		for range sent {
			var err error
			if *reply, _, err = rr.Read((*reply)[:0], memcache.CmdMetaDelete, nil); err != nil {
				return deleted, err
			}
			switch res, err := memcache.ParseMetaDeleted(*reply); {
			case err != nil:
				return deleted, err
			case res == memcache.Deleted:
				deleted++
			default: // written since it was listed (EX), or gone (NF)
				kept++
			}
		}
	}
	st.addServer(st.m.deleted, &st.deleted, b.addr, deleted)
	st.addServer(st.m.kept, &st.kept, b.addr, kept)
	return deleted, nil
}

// pause waits d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
