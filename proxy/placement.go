package proxy

import (
	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/compat/twemproxy"
	"github.com/kolco-dev/kolco/keyhash"
)

// picker maps a key to an index into the servers it was built over.
type picker interface {
	Index(key []byte) int
}

// placement is an immutable snapshot of where a pool's keys go: the
// servers that take keys and the picker over them, with the pool's copies
// per key and the proxy's zone. Requests load it once and route by it; a
// change of health publishes a new one.
type placement struct {
	pick     picker
	live     []*backend
	replicas int
	zone     string
}

// newPlacement builds the placement of a pool over the servers that take
// keys: all of them under fail-fast and none, and with replicas, where a
// down server keeps its place so that its keys are read from their other
// copies instead of moving; under rehash, the servers not down, as
// twemproxy rebuilds its continuum.
func newPlacement(cfg *PoolConfig, servers []*backend) (*placement, error) {
	pl := &placement{live: make([]*backend, 0, len(servers)), replicas: cfg.Replicas, zone: cfg.Zone}
	for _, b := range servers {
		if cfg.Ejection != EjectRehash || cfg.Replicas > 1 || !b.health.isDown() {
			pl.live = append(pl.live, b)
		}
	}
	if len(pl.live) == 0 {
		return pl, nil
	}
	specs := make([]twemproxy.Server, len(pl.live))
	for i, b := range pl.live {
		specs[i] = b.spec
	}
	pick, err := newPicker(cfg, specs)
	if err != nil {
		return nil, err
	}
	pl.pick = pick
	return pl, nil
}

// placementError is the error of a pool whose placement cannot be built
// from a valid configuration: one the algorithm refuses, such as a ring of
// more points than it holds.
func placementError(pool string, err error) error {
	return &ConfigError{Pool: pool, Key: "distribution", Err: err}
}

// rebuild publishes a new placement of the pool's servers.
func (p *pool) rebuild() error {
	p.placeMu.Lock()
	defer p.placeMu.Unlock()
	pl, err := newPlacement(p.cfg, p.backends)
	if err != nil {
		return err
	}
	p.place.Store(pl)
	return nil
}

// copies appends to dst the indexes in pl.live of the servers of key's
// copies, in preference order.
func (pl *placement) copies(dst []int, buf []kolco.Node, key []byte) ([]int, []kolco.Node) {
	r, ok := pl.pick.(*kolcoPicker)
	if !ok { // not reached: Validate allows replicas with kolco's placements only
		return append(dst, pl.pick.Index(key)), buf
	}
	return r.Replicas(dst, buf, key, pl.replicas)
}

// newPicker builds the pool's placement over servers: twemproxy's for
// ketama and modula, else the kolco algorithm named by distribution over
// nodes named as twemproxy names them, weighted as configured.
func newPicker(cfg *PoolConfig, servers []twemproxy.Server) (picker, error) {
	if cfg.Distribution == twemproxy.Ketama || cfg.Distribution == twemproxy.Modula {
		return twemproxy.New(twemproxy.Config{Hash: cfg.Hash, HashTag: cfg.HashTag, Distribution: cfg.Distribution}, servers)
	}
	var h keyhash.Func // none: the algorithm's own (CRC16 for slots)
	var err error
	if cfg.KeyHash != "" {
		if h, err = keyhash.Parse(cfg.KeyHash); err != nil {
			return nil, err
		}
	}
	nodes := make([]kolco.Node, len(servers))
	k := &kolcoPicker{index: make(map[string]int, len(servers))}
	for i, s := range servers {
		nodes[i] = kolco.Node{ID: s.RingName(), Weight: float64(max(s.Weight, 1)), Addr: s.Addr(), Zone: cfg.zoneOf(s)}
		k.index[nodes[i].ID] = i
	}
	opts := algo.Options{Hash: h, VNodes: cfg.VNodes, ZoneAware: len(cfg.Zones) > 0}
	if k.p, err = algo.New(cfg.Distribution, nodes, opts); err != nil {
		return nil, err
	}
	k.ids, _ = k.p.(kolco.IDLocator)
	if len(cfg.HashTag) == 2 {
		k.tag = [2]byte{cfg.HashTag[0], cfg.HashTag[1]}
		k.hasTag = true
	}
	return k, nil
}

// kolcoPicker adapts a kolco placement to server indexes.
type kolcoPicker struct {
	p      algo.Placement
	ids    kolco.IDLocator // p, when it can answer with the ID alone
	index  map[string]int
	tag    [2]byte
	hasTag bool
}

// Index returns the index of the server that owns key.
func (k *kolcoPicker) Index(key []byte) int {
	if k.hasTag {
		key = twemproxy.Tagged(key, k.tag)
	}
	var id string
	if k.ids != nil {
		id, _ = k.ids.LocateID(keyString(key))
	} else {
		n, _ := k.p.Locate(keyString(key))
		id = n.ID
	}
	// An error is not reached (the pool has servers); its empty ID would
	// give server 0.
	return k.index[id]
}

// Replicas appends to dst the indexes of the n servers that hold key, in
// preference order; buf is scratch space for the placement's answer.
func (k *kolcoPicker) Replicas(dst []int, buf []kolco.Node, key []byte, n int) ([]int, []kolco.Node) {
	if k.hasTag {
		key = twemproxy.Tagged(key, k.tag)
	}
	buf, err := k.p.LocateN(buf[:0], keyString(key), n)
	if err != nil {
		return dst, buf // not reached: the pool has servers
	}
	for _, node := range buf {
		dst = append(dst, k.index[node.ID])
	}
	return dst, buf
}
