package proxy

import (
	"context"
	"fmt"
	"sync"
)

// A change of the pool (a reload, a source's version) prepared while a
// server is out is prepared beside the running pool, which shares the
// server's outage with the pool prepared (see pool.inherit). Two things
// of the change do not reach such a server, and its return makes up for
// both.
//
// The first is the presweep (mc_sweep.go): before a change serves, each
// exclusive server is listed and its copies of the keys the change gives
// it removed, as they may be copies a change before left behind, older
// than the writes made since at the keys' servers of then. A server out
// cannot be listed and is passed over; and its outage journal does not
// name those keys, as no write routed around it was one of its keys then.
// So its return served them at their values of before (found by the
// fault schedule's seed 879: memcached, flip, warm changes with sweep; m2
// out as "add m0" and then "remove m0" came, a key of m0's that had been
// m2's before read at its value of before m2 went out, older than a
// delete acknowledged after the change). The journal records each change
// it spans (spanChange), and the return removes the returning server's
// copies of the keys one of them gives it and the placement it replaced
// did not (sweepGained), as the presweep would have, before it settles
// the rest.
//
// The second is which pool settles the return. Both pools probe the
// server, and both would settle it, each by its own placement and
// servers. The pool prepared does not serve yet, and the stand-ins the
// change removes are none of its servers: settled by it, their copies
// of the server's keys stayed, while the running pool went on serving
// and deleted keys at the server it had back; once committed, the new
// pool's window read such a stand-in on a miss at the server, as the
// placement it replaced sent the keys there, and served the deleted
// values (the replay of seed 879 settled the return twice, 10 ms apart,
// "keys=4" and then "keys=0"). So only the pool serving settles a return
// (outages.held): the running pool until the change is committed, whose
// servers are every stand-in it wrote to, and the new pool from then on,
// whose window's writes delete a removed stand-in's copies as they go.

// missedChange is a change of the placement made while a server was out:
// the placement it replaced and the one it made.
type missedChange struct {
	before, after *placement
}

// errNotServing is why a server stays down in a pool that does not serve:
// prepared beside the one it replaces and not committed yet, or replaced.
// The pool serving settles the return (see above).
var errNotServing = fmt.Errorf("%w: this pool does not serve (a change prepared beside the running pool, or replaced by one)", errSettling)

// changeLog is the changes of the placement made while a server was
// out that its return has yet to sweep the gains of (see sweepGained):
// an outage journal's, or, in a pool that keeps none (fail-fast, or none
// - which marks no server down, and whose presweep so refuses a change it
// cannot list a server for), the server's own (backend.missed).
type changeLog struct {
	mu     sync.Mutex
	change []missedChange
}

// span records a change of the placement from before to after made
// while the server is out (see above).
func (l *changeLog) span(before, after *placement) {
	if before == nil || after == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.change = append(l.change, missedChange{before, after})
}

// spanned returns the changes recorded so far.
func (l *changeLog) spanned() []missedChange {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.change[:len(l.change):len(l.change)]
}

// swept forgets the first n changes recorded: the server's copies of the
// keys they gave it were removed.
func (l *changeLog) swept(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.change = l.change[n:]
}

// downAcross gives b, down in this pool, which replaces the pool of ob,
// the record of what ob's server missed: ob's outage journal, shared (see
// share), in a pool that keeps them; else ob's changeLog, with the change
// from before, the placement of ob's pool, to this pool's, which the
// presweep passed b over for as it was down (nil for none), for b's
// return to sweep (returnOf). The log is ob's too: the first return of
// either sweeps it, and what ob's pool sweeps of this change are keys it
// does not place on b.
func (out *outages) downAcross(b, ob *backend, before *placement) {
	if out.keeps {
		if o := ob.outage.Load(); o != nil {
			out.share(b, o, before)
		}
		return
	}
	l := ob.missed.Load()
	if l == nil {
		ob.missed.CompareAndSwap(nil, new(changeLog))
		l = ob.missed.Load()
	}
	if b.missed.CompareAndSwap(nil, l) || b.missed.Load() == l {
		l.span(before, out.place.Load())
	}
}

// returnOf settles b's return and marks it up: what it missed settled
// from its outage journal (settleReturn), or, in a pool that keeps none,
// its copies of the keys a change gave it while it was out removed
// (sweepGained). The error says why b stays down, as settleReturn's.
func (out *outages) returnOf(b *backend) error {
	if o := b.outage.Load(); o != nil {
		return out.settleReturn(b, o)
	}
	if l := b.missed.Load(); l != nil && len(l.spanned()) > 0 {
		if out.held.Load() {
			return errNotServing
		}
		if err := out.sweepGained(out.ctx, b, l); err != nil {
			return err
		}
	}
	out.restoreChange(b.restore)
	return nil
}

// placesOn reports whether pl, every server up, places key on the server
// at addr: its server, or with replicas one of its copies.
func placesOn(pl *placement, key []byte, addr string, sc *routeScratch) bool {
	full := pl.configured()
	if len(full.servers) == 0 {
		return false
	}
	if full.replicas <= 1 {
		return full.servers[full.pick.Index(key)].addr == addr
	}
	sc.idx, sc.nodes = full.copies(sc.idx[:0], sc.nodes, key)
	for _, i := range sc.idx {
		if full.servers[i].addr == addr {
			return true
		}
	}
	return false
}

// sweepGained removes b's copies of the keys a change made while it was
// out gives it and the placement that change replaced did not (see
// above), before its journal is settled. A server not marked exclusive
// (sweep.exclusive) is not swept, as the presweep sweeps none: its keys
// may be another pool's. The error is the listing's or a removal's: b
// stays down, and the next return sweeps it again.
func (out *outages) sweepGained(ctx context.Context, b *backend, l *changeLog) error {
	changes := l.spanned()
	if len(changes) == 0 {
		return nil
	}
	if !out.cfg.exclusive(b.node) {
		l.swept(len(changes))
		return nil
	}
	var sc routeScratch
	keys, err := out.front.heldKeys(ctx, b, func(key []byte) bool {
		for _, c := range changes {
			if placesOn(c.after, key, b.addr, &sc) && !placesOn(c.before, key, b.addr, &sc) {
				return true
			}
		}
		return false
	})
	if err != nil {
		return fmt.Errorf("listing its copies of keys a change gave it while it was out: %w", err)
	}
	for i := 0; i < len(keys); i += settleBatch {
		if err := out.front.dropCopies(ctx, b, keys[i:min(i+settleBatch, len(keys))]); err != nil {
			return fmt.Errorf("removing its copies of keys a change gave it while it was out: %w", err)
		}
	}
	l.swept(len(changes))
	if len(keys) > 0 {
		out.log.Info("returning server swept of the old copies of keys a change gave it while it was out", "server", b.name(),
			"addr", b.addr, "keys", len(keys))
	}
	return nil
}
