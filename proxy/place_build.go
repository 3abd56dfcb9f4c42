package proxy

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// picker maps a key to an index into the servers of the placement it
// belongs to.
type picker interface {
	Index(key []byte) int
}

// placement is an immutable snapshot of where a pool's keys go: the
// servers that take keys and the picker over them, with the pool's copies
// per key and the proxy's zone. Requests load it once and route by it.
//
// Two kinds of change make a new one. A change of membership (a reload
// that adds, removes or re-weights servers) is applied to the placement
// as a change (see [pool.follow]). A change of health publishes one only
// for twemproxy's distributions, which nutcracker rebuilds over the
// servers not down; kolco's keep the configured placement and pass over a
// server marked down at lookup ([placement.standIn]).
type placement struct {
	pick picker
	// servers are the servers pick's indexes name: for twemproxy's
	// distributions the ones that take keys (under rehash those not down);
	// for kolco's every configured server, in the ID order of its layout.
	servers []*backend
	// kolco is pick for kolco's distributions; nil for twemproxy's.
	kolco *kolcoPicker
	// skipDown makes lookups pass over servers marked down (kolco's
	// distributions under rehash, one copy per key).
	skipDown bool
	replicas int
	zone     string
	// prev is the placement this one replaced by a change of membership,
	// without its own prev: one step back, as follow was given it.
	prev *placement
	// mig is the migration that follows the change that published this
	// placement (see migration), or nil: then requests route by the
	// placement alone.
	mig *migration
	// sig is the placement's signature: equal for two placements that
	// send every key to the same server address.
	sig string
}

// layout returns the configured placement of a kolco distribution, or nil.
func (pl *placement) layout() *layout {
	if pl == nil || pl.kolco == nil {
		return nil
	}
	return pl.kolco.lay
}

// placementError is the error of a pool whose placement cannot be built
// from a valid configuration: one the algorithm refuses, such as a ring of
// more points than it holds.
func placementError(pool string, err error) error {
	return &ConfigError{Pool: pool, Key: "distribution", Err: err}
}

// specs returns the server specs of bs.
func specs(bs []*backend) []twemproxy.Server {
	out := make([]twemproxy.Server, len(bs))
	for i, b := range bs {
		out[i] = b.spec
	}
	return out
}

// twemproxyPlacement builds the placement of a pool of ketama or modula
// as nutcracker does: over all its servers, or under rehash (with one
// copy) over those not down.
func (p *pool) twemproxyPlacement() (*placement, error) {
	cfg := p.cfg
	pl := &placement{servers: make([]*backend, 0, len(p.backends)), replicas: cfg.Replicas, zone: cfg.Zone}
	for _, b := range p.backends {
		if cfg.Ejection != EjectRehash || cfg.Replicas > 1 || !b.health.isDown() {
			pl.servers = append(pl.servers, b)
		}
	}
	pl.sig = signature(cfg, pl)
	if len(pl.servers) == 0 {
		return pl, nil
	}
	pick, err := newPicker(cfg, specs(pl.servers))
	if err != nil {
		return nil, err
	}
	pl.pick = pick
	return pl, nil
}

// kolcoPlacement returns the placement of the pool over its servers for
// the layout l: the table from l's node positions to the pool's servers is
// built here, once per published placement, so that a lookup goes from the
// key's hash to its server by index.
func (p *pool) kolcoPlacement(l *layout) (*placement, error) {
	byName := make(map[string]*backend, len(p.backends))
	for _, b := range p.backends {
		byName[b.spec.RingName()] = b
	}
	cfg := p.cfg
	pl := &placement{servers: make([]*backend, len(l.nodes)), replicas: cfg.Replicas, zone: cfg.Zone,
		skipDown: cfg.Ejection == EjectRehash && cfg.Replicas <= 1}
	for i, n := range l.nodes {
		if pl.servers[i] = byName[n.ID]; pl.servers[i] == nil {
			return nil, fmt.Errorf("the placement names %q, which is not one of the pool's servers", n.ID)
		}
	}
	pl.kolco = newKolcoPicker(cfg, l)
	pl.pick = pl.kolco
	pl.sig = signature(cfg, pl)
	return pl, nil
}

// rebuild publishes the pool's placement after a change of health. Only
// twemproxy's distributions change with health; kolco's keep the
// configured placement, and routing passes over a server marked down.
// A rebuild that moves keys starts a migration (see migration).
func (p *pool) rebuild() error { return p.rebuildPlacement(true) }

// rebuildPlacement is rebuild; served says whether the placement it
// replaces has served requests: one that never did (the placement of a
// reload before the health it inherits) has no copies to fall back to.
func (p *pool) rebuildPlacement(served bool) error {
	if !isTwemproxy(p.cfg) {
		return nil
	}
	p.placeMu.Lock()
	defer p.placeMu.Unlock()
	pl, err := p.twemproxyPlacement()
	if err != nil {
		return err
	}
	if cur := p.place.Load(); cur != nil {
		pl.prev = cur.prev // health is not membership: the previous placement stays
		pl.mig = cur.mig
		if served {
			pl.mig = p.migrationAfter(cur, pl, cur.sig != pl.sig)
		}
	}
	p.publish(pl)
	return nil
}

// copies appends to dst the indexes in pl.servers of the servers of key's
// copies, in preference order.
func (pl *placement) copies(dst []int, buf []kolco.Node, key []byte) ([]int, []kolco.Node) {
	if pl.kolco == nil { // not reached: Validate allows replicas with kolco's placements only
		return append(dst, pl.pick.Index(key)), buf
	}
	return pl.kolco.Replicas(dst, buf, key, pl.replicas)
}

// newPicker builds the pool's placement over servers afresh: twemproxy's
// for ketama and modula, else the kolco algorithm named by distribution
// over nodes named as twemproxy names them, weighted as configured.
func newPicker(cfg *PoolConfig, servers []twemproxy.Server) (picker, error) {
	if isTwemproxy(cfg) {
		return twemproxy.New(twemproxy.Config{Hash: cfg.Hash, HashTag: cfg.HashTag, Distribution: cfg.Distribution}, servers)
	}
	l, err := newLayout(settingsOf(cfg), nodesOf(cfg, servers), nil)
	if err != nil {
		return nil, err
	}
	return newKolcoPicker(cfg, l), nil
}

// kolcoPicker adapts a kolco layout to server indexes: the positions of
// its nodes in ID order.
type kolcoPicker struct {
	lay    *layout
	p      algo.Placement // lay.p
	tag    [2]byte
	hasTag bool
}

func newKolcoPicker(cfg *PoolConfig, l *layout) *kolcoPicker {
	k := &kolcoPicker{lay: l, p: l.p}
	if len(cfg.HashTag) == 2 {
		k.tag = [2]byte{cfg.HashTag[0], cfg.HashTag[1]}
		k.hasTag = true
	}
	return k
}

// key returns what the placement hashes of key: the text between the hash
// tags when present.
func (k *kolcoPicker) key(key []byte) string {
	if k.hasTag {
		key = twemproxy.Tagged(key, k.tag)
	}
	return keyString(key)
}

// Index returns the index of the server that owns key: its position in
// the layout's ID order, with one hash of the key and no map.
func (k *kolcoPicker) Index(key []byte) int {
	i, _ := k.p.LocateIndex(k.key(key))
	// An error is not reached (the pool has servers); its -1 would give
	// server 0.
	return max(i, 0)
}

// Replicas appends to dst the indexes of the n servers that hold key, in
// preference order; buf is scratch space for the placement's answer.
func (k *kolcoPicker) Replicas(dst []int, buf []kolco.Node, key []byte, n int) ([]int, []kolco.Node) {
	buf, err := k.p.LocateN(buf[:0], k.key(key), n)
	if err != nil {
		return dst, buf // not reached: the pool has servers
	}
	for _, node := range buf {
		dst = append(dst, max(k.lay.index(node.ID), 0))
	}
	return dst, buf
}
