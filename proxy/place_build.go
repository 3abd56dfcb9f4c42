package proxy

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// placementError is the error of a pool whose placement cannot be built
// from a valid configuration: one the algorithm refuses, such as a ring of
// more points than it holds.
func placementError(pool string, err error) error {
	return &ConfigError{Pool: pool, Key: "distribution", Err: err}
}

// nodesOf returns the nodes of bs.
func nodesOf(bs []*backend) []kolco.Node {
	out := make([]kolco.Node, len(bs))
	for i, b := range bs {
		out[i] = b.node
	}
	return out
}

// ringServers returns nodes as the servers of nutcracker's placement:
// each named by its ID, which is the name nutcracker hashes (the name
// given, else the address), weighted by its weight, a whole number (see
// checkWholeWeights).
func ringServers(nodes []kolco.Node) []twemproxy.Server {
	out := make([]twemproxy.Server, len(nodes))
	for i, n := range nodes {
		s := twemproxy.Server{Host: n.Addr, Name: n.ID, Weight: int(n.EffectiveWeight())}
		if host, port, err := net.SplitHostPort(n.Addr); err == nil {
			s.Host, s.Port = host, atoiOr(port)
		}
		out[i] = s
	}
	return out
}

// atoiOr returns the number s holds, or 0.
func atoiOr(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// twemproxyPlacement builds the placement of a pool of ketama or modula
// as nutcracker does: over all its servers, or under rehash (with one
// copy) over those not down.
func (pg *placing) twemproxyPlacement() (*placement, error) {
	cfg := pg.cfg
	pl := &placement{servers: make([]*backend, 0, len(pg.backends)), replicas: cfg.Replicas, zone: cfg.Zone}
	for _, b := range pg.backends {
		if cfg.Ejection != EjectRehash || cfg.Replicas > 1 || !b.health.isDown() {
			pl.servers = append(pl.servers, b)
		}
	}
	pl.sig = signature(cfg, pl)
	if len(pl.servers) < len(pg.backends) {
		full := &placement{servers: pg.backends, replicas: cfg.Replicas, zone: cfg.Zone}
		pick, err := newPicker(cfg, nodesOf(full.servers))
		if err != nil {
			return nil, err
		}
		full.pick, pl.full = pick, full
		if err := pg.placeIfUp(pl); err != nil {
			return nil, err
		}
	}
	if len(pl.servers) == 0 {
		return pl, nil
	}
	pick, err := newPicker(cfg, nodesOf(pl.servers))
	if err != nil {
		return nil, err
	}
	pl.pick = pick
	return pl, nil
}

// placeIfUp builds, for each server pl leaves out, the placement it would
// make were that server up (see placement.servesIfUp): nutcracker's
// placement over a set of servers is not the one over fewer with their
// keys passed on, so what a return takes back is asked of the placement
// it makes.
func (pg *placing) placeIfUp(pl *placement) error {
	pl.ifUp = map[*backend]*placement{}
	for _, b := range pg.backends {
		if !b.health.isDown() {
			continue
		}
		alt := &placement{servers: make([]*backend, 0, len(pl.servers)+1), replicas: pl.replicas, zone: pl.zone}
		for _, s := range pg.backends {
			if s == b || !s.health.isDown() {
				alt.servers = append(alt.servers, s)
			}
		}
		pick, err := newPicker(pg.cfg, nodesOf(alt.servers))
		if err != nil {
			return err
		}
		alt.pick = pick
		pl.ifUp[b] = alt
	}
	return nil
}

// kolcoPlacement returns the placement of the pool over its servers for
// the layout l: the table from l's node positions to the pool's servers is
// built here, once per published placement, so that a lookup goes from the
// key's hash to its server by index.
func (pg *placing) kolcoPlacement(l *layout) (*placement, error) {
	byName := make(map[string]*backend, len(pg.backends))
	for _, b := range pg.backends {
		byName[b.name()] = b
	}
	cfg := pg.cfg
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
// A rebuild that moves keys starts a migration (see migration); up says
// a server came back, and then its window does not read the placement
// with the server out, as a kolco distribution's return does not (see
// restoreChange).
func (pg *placing) rebuild(up bool) error { return pg.rebuildPlacement(true, !up) }

// rebuildPlacement is rebuild; served says whether the placement it
// replaces has served requests: one that never did (the placement of a
// reload before the health it inherits) has no copies to fall back to;
// readPrev whether a window that opens reads it.
func (pg *placing) rebuildPlacement(served, readPrev bool) error {
	if !isTwemproxy(pg.cfg) {
		return nil
	}
	pg.mu.Lock()
	defer pg.mu.Unlock()
	pl, err := pg.twemproxyPlacement()
	if err != nil {
		return err
	}
	if cur := pg.place.Load(); cur != nil {
		pl.mig, pl.move = cur.mig, cur.move
		if served {
			pl.mig = pg.mig.after(cur, pl, cur.sig != pl.sig, readPrev)
		}
	}
	pg.publish(pl)
	return nil
}

// newPicker builds the pool's placement over the servers nodes afresh:
// twemproxy's for ketama and modula, else the kolco algorithm named by
// distribution.
func newPicker(cfg *PoolConfig, nodes []kolco.Node) (picker, error) {
	if cfg.Distribution == twemproxy.Random {
		return randomPicker(len(nodes)), nil
	}
	if isTwemproxy(cfg) {
		return twemproxy.New(twemproxy.Config{Hash: cfg.Hash, HashTag: cfg.HashTag, Distribution: cfg.Distribution}, ringServers(nodes))
	}
	l, err := newLayout(settingsOf(cfg), nodes, nil)
	if err != nil {
		return nil, err
	}
	return newKolcoPicker(cfg, l), nil
}

// shareSamples is how many keys measure a placement's shares: the
// measured share is within about 0.4% (two standard errors at a share of
// one half) of the exact one.
const shareSamples = 1 << 16

// keyShares is the share of keys of each server under one placement.
type keyShares struct {
	pl     *placement
	shares map[*backend]float64
}

// shares returns the share of the pool's keys each server holds under the
// placement in use, measured once per placement over shareSamples keys.
func (pg *placing) shares() map[*backend]float64 {
	pl := pg.place.Load()
	if ks := pg.shareCache.Load(); ks != nil && ks.pl == pl {
		return ks.shares
	}
	counts := make(map[*backend]int, len(pg.backends))
	total := 0
	var sc routeScratch
	key := make([]byte, 0, 32)
	for i := range shareSamples {
		key = fmt.Appendf(key[:0], "kolco:share:%d", i)
		for _, b := range pl.route(key, true, &sc) {
			counts[b]++
			total++
		}
	}
	ks := &keyShares{pl: pl, shares: make(map[*backend]float64, len(counts))}
	for b, n := range counts {
		ks.shares[b] = float64(n) / float64(total)
	}
	pg.shareCache.Store(ks)
	return ks.shares
}

// randomPicker is twemproxy's "distribution: random": each request goes to
// a server picked at random, with equal chances whatever the weights,
// among the servers of the placement (under rehash those not down), as
// nutcracker's random_dispatch picks among its live servers. It places no
// key: a read finds a value only where some write happened to go, which is
// what a pool of servers that hold the same data wants.
type randomPicker int

// Index returns a server's index at random; the key is not read.
func (n randomPicker) Index([]byte) int { return rand.IntN(int(n)) }
