package proxy

import (
	"fmt"
	"time"

	"github.com/kolco-dev/kolco"
)

// follow publishes the pool's placement over its servers after a change
// of membership, and keeps prev, the placement it replaces, beside it for
// a migration window. It is the one path by which a pool's membership
// changes: a reload calls it with the replaced pool's layout and
// placement, and so would a follower of a membership source with the
// pool's own.
//
// For twemproxy's distributions the placement is built as nutcracker
// builds it, over the servers that take keys. For kolco's it is from, the
// layout it follows, after the change that turns from's node set into the
// pool's servers (kolco.Diff, applied by Mutable.Apply, so that a
// history-dependent algorithm keeps every surviving key in place; a change
// with nothing in it keeps from as it is). It is built afresh when from is
// nil or of other settings (another distribution, key_hash, vnodes, or
// zones), which no change can turn into this pool's.
//
// A change that moves keys starts a migration (see migration): for a
// migration window prev answers the misses of the keys it moved.
//
// The error is the algorithm's refusal of the change; then nothing is
// published.
func (pg *placing) follow(from *layout, prev *placement) error {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	var pl *placement
	var err error
	if isTwemproxy(pg.cfg) {
		pl, err = pg.twemproxyPlacement()
	} else {
		var l *layout
		if l, err = pg.nextLayout(from); err == nil {
			pl, err = pg.kolcoPlacement(l)
		}
	}
	if err != nil {
		return err
	}
	if prev != nil {
		pl.mig = pg.mig.after(prev, pl, prev.sig != pl.sig, true)
		pl.move = pg.mover.after(prev, pl)
	}
	pg.publish(pl)
	return nil
}

// nextLayout returns the layout of the pool's servers that follows from.
func (pg *placing) nextLayout(from *layout) (*layout, error) {
	if m := pg.members; m != nil && m.lay != nil {
		return m.lay, nil // a membership source's version: the placement its follower keeps
	}
	set := settingsOf(pg.cfg)
	nodes := nodesOf(pg.backends)
	if from == nil || from.settings != set {
		if from != nil {
			pg.log.Warn("placement settings changed: keys placed afresh", "from", from.settings.Distribution, "to", set.Distribution)
		}
		l, err := newLayout(set, nodes, nil)
		if err == nil {
			pg.log.Info("placement", "distribution", set.Distribution, "fingerprint", l.fingerprint)
		}
		return l, err
	}
	l, c, err := from.change(nodes)
	if err != nil {
		return nil, err
	}
	if !c.Empty() {
		removed, added, updated := describeChange(c)
		pg.log.Info("placement changed", "removed", removed, "added", added, "updated", updated,
			"fingerprint", l.fingerprint, "was", from.fingerprint)
	}
	return l, nil
}

// sourceView is one version of a pool's source as the pool would serve
// it. It is immutable; the pool's configuration points at the one it
// serves.
type sourceView struct {
	revision int64
	// nodes are the nodes that take keys, sorted by ID, with addresses.
	nodes []kolco.Node
	// drained are the IDs of the nodes the store lists that take none.
	drained []string
	// fingerprint is that of the placement over nodes.
	fingerprint string
	// shared reports that another proxy following the store builds the
	// same placement at this revision (see membership.View).
	shared bool
	// lay is the follower's placement, for kolco's distributions; nil for
	// ketama and modula.
	lay *layout
	// err is why no pool can serve the version's nodes as its servers.
	err error
	// sentinel is the source when it is Sentinel's (see
	// pool.sentinel), nil for another.
	sentinel interface {
		Nudge()
		DownAfter(master string) time.Duration
	}
	// placeholder marks the view a pool starts from before its source's
	// first version when its nodes are the configured servers: no source
	// named them, and they may be anything - a server that left the fleet
	// long ago. A pool on it is placed afresh by the first version (no
	// migration window reads from its servers, no write deletes there, a
	// store moves nothing off them), and its listener accepts only once
	// the source has answered (see listener.placed).
	placeholder bool
}

// check returns why the pool configured as pc cannot serve v, or nil.
func (v *sourceView) check(pc *PoolConfig) error {
	switch {
	case v.err != nil:
		return v.err
	case pc.Replicas > len(v.nodes):
		return fmt.Errorf("%d replicas of each key need at least %d servers (got %d)", pc.Replicas, pc.Replicas, len(v.nodes))
	}
	return nil
}
