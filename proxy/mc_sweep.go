package proxy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
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

// sweepAfter sweeps the pool's exclusive servers after m's window and
// settles m once every one of them was swept or failed; it returns early,
// leaving m to the loop, when a newer change is published, the pool closes
// or a reload halts the sweep.
func (p *pool) sweepAfter(m *migration) {
	st := p.mig.stats
	ctx := p.mig.sweepCtx
	if ctx.Err() != nil || !p.placementAgreed(ctx, m) {
		return
	}
	st.sweeping.Set(1)
	defer st.sweeping.Set(0)
	var done []string // addresses swept: servers of one address are one server
	for _, b := range p.backends {
		if !p.cfg.exclusive(b.node) || b.health.isDown() || slices.Contains(done, b.addr) {
			continue
		}
		done = append(done, b.addr)
		err := p.sweepServer(ctx, m, b)
		switch {
		case err == nil:
			p.markClean(m, b.addr)
		case ctx.Err() != nil || errors.Is(err, errMigrationChanged):
			return
		default:
			st.addServer(st.m.sweepErrs, &st.errors, b.addr, 1)
			p.log.Warn("sweep of a server failed; its orphaned copies stay until the next change", "server", b.name(),
				"addr", b.addr, "err", err)
		}
	}
	p.settle(m)
	p.log.Info("sweep done", "servers", len(done), "listed", st.listed.Load(), "deleted", st.deleted.Load(), "kept", st.kept.Load())
}

// markClean records that the server at addr holds no orphan, swept while
// m's placement is the pool's.
func (p *pool) markClean(m *migration, addr string) {
	p.mig.sweepMu.Lock()
	defer p.mig.sweepMu.Unlock()
	if p.place.Load().mig != m {
		return // a change since: what it moved is not swept
	}
	if p.mig.clean == nil {
		p.mig.clean = map[string]bool{}
	}
	p.mig.clean[addr] = true
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

// presweep removes, from the servers of p that next keeps, the orphaned
// copies of keys next gives them (see above). The error is a server's that
// could not be listed or swept: the change is not applied.
func (p *pool) presweep(ctx context.Context, next *pool) error {
	cur, nextPl := p.place.Load(), next.place.Load()
	if len(p.cfg.Sweep.Exclusive) == 0 || cur.sig == nextPl.sig {
		p.mig.sweepMu.RLock()
		next.mig.clean = maps.Clone(p.mig.clean)
		p.mig.sweepMu.RUnlock()
		return nil
	}
	p.mig.sweepMu.RLock()
	clean := maps.Clone(p.mig.clean)
	p.mig.sweepMu.RUnlock()
	var done []string
	for _, b := range p.backends {
		if !p.cfg.exclusive(b.node) || !next.cfg.exclusive(b.node) || b.health.isDown() || clean[b.addr] ||
			slices.Contains(done, b.addr) || next.backendAt(b.addr) == nil {
			continue
		}
		done = append(done, b.addr)
		if err := p.presweepServer(ctx, b, nextPl); err != nil {
			return fmt.Errorf("pool %s: server %s may hold copies of keys the change gives it, older than what was written since; removing them failed: %w",
				p.name, b.addr, err)
		}
	}
	if len(done) > 0 {
		p.log.Info("servers swept of the old copies of keys the change gives them", "servers", len(done))
	}
	return nil
}

// presweepServer lists b and deletes its copies of keys pl, the placement
// to come, gives it and the pool's does not, trying again when a change of
// health replaces the pool's placement meanwhile.
func (p *pool) presweepServer(ctx context.Context, b *backend, pl *placement) error {
	for attempt := 1; ; attempt++ {
		m := p.place.Load().mig
		gained, err := p.listGained(ctx, b, pl)
		if err != nil {
			return err
		}
		// At the servers' speed, not the sweep's rate: the change waits,
		// and these are only the keys it gives back.
		_, err = p.deleteOrphans(ctx, m, b, gained, 0)
		if !errors.Is(err, errMigrationChanged) || attempt == 3 {
			return err
		}
	}
}

// listGained lists b's items and returns those of keys pl gives b and the
// pool's placement does not.
func (p *pool) listGained(ctx context.Context, b *backend, pl *placement) ([]orphan, error) {
	var sc routeScratch
	cur := p.place.Load()
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

// sweepServer sweeps one server, in passes of at most maxOrphans, until a
// pass deletes nothing more.
func (p *pool) sweepServer(ctx context.Context, m *migration, b *backend) error {
	for {
		orphans, more, err := p.listOrphans(ctx, b)
		if err != nil {
			return err
		}
		deleted, err := p.deleteOrphans(ctx, m, b, orphans, p.cfg.Sweep.Rate)
		if err != nil || !more || deleted == 0 {
			return err
		}
	}
}

// listOrphans lists b's items and returns those of keys b does not own,
// at most maxOrphans (more is then set).
func (p *pool) listOrphans(ctx context.Context, b *backend) (orphans []orphan, more bool, err error) {
	st := p.mig.stats
	var sc routeScratch
	pl := p.place.Load()
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
func (p *pool) deleteOrphans(ctx context.Context, m *migration, b *backend, orphans []orphan, rate int) (int, error) {
	if len(orphans) == 0 {
		return 0, nil
	}
	timeout := p.cfg.Timeout
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
		del, err := p.deleteBatch(ctx, m, b, conn, rr, orphans[:n], &buf, &keys, &reply)
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
func (p *pool) deleteBatch(ctx context.Context, m *migration, b *backend, conn net.Conn, rr *memcache.ReplyReader,
	batch []orphan, buf, keys, reply *[]byte) (int, error) {
	st := p.mig.stats
	p.mig.sweepMu.RLock()
	defer p.mig.sweepMu.RUnlock()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	pl := p.place.Load()
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
		if err := conn.SetDeadline(time.Now().Add(p.cfg.Timeout)); err != nil {
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
