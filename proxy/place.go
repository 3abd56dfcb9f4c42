package proxy

import (
	"strconv"
	"strings"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/compat/twemproxy"
	"github.com/kolco-dev/kolco/internal/bytestr"
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
// as a change (see [placing.follow]). A change of health publishes one only
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
	// full is, for twemproxy's distributions with servers left out
	// (rehash), the placement over every configured server: where a key
	// belongs while its server is out (see outage); nil when pl is over
	// every configured server itself.
	full *placement
	// ifUp is, for twemproxy's distributions with servers left out, the
	// placement each server left out would make were it up and the others
	// as they are: what its return takes back (see servesIfUp).
	ifUp     map[*backend]*placement
	replicas int
	zone     string
	// mig is the migration that follows the change that published this
	// placement (see migration), or nil: then requests route by the
	// placement alone.
	mig *migration
	// move is the move of a store's keys that follows the change that
	// published this placement (see storeMove), or nil.
	move keyMove
	// sig is the placement's signature: equal for two placements that
	// send every key to the same server address.
	sig string
}

// steady reports whether a key's server under pl is the one to read it
// from: no migration window is open and no store's move under way (see
// hotCache).
func (pl *placement) steady() bool {
	return (pl.mig == nil || !pl.mig.open()) && (pl.move == nil || pl.move.ended())
}

// placesAlike reports whether before and after, the placements of a pool
// and of the pool that replaces it, send every key to the server of the
// same name, every server up: the same algorithm, settings and servers by
// name and weight, in the same order, whatever their addresses. A
// placement without a signature is alike no other.
func placesAlike(before, after *placement) bool {
	return before.sig != "" && after.sig != "" && before.nameSignature() == after.nameSignature()
}

// nameSignature is pl's signature with its servers named by name and
// weight, not address, in the order of its configured placement.
func (pl *placement) nameSignature() string {
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(pl.sig, serversSignature(pl.servers)))
	for _, s := range pl.configured().servers {
		b.WriteString(" " + s.name() + ":" + strconv.FormatFloat(s.node.EffectiveWeight(), 'g', -1, 64))
	}
	return b.String()
}

// configured returns the placement over every configured server, down or
// not.
func (pl *placement) configured() *placement {
	if pl.full != nil {
		return pl.full
	}
	return pl
}

// layout returns the configured placement of a kolco distribution, or nil.
func (pl *placement) layout() *layout {
	if pl == nil || pl.kolco == nil {
		return nil
	}
	return pl.kolco.lay
}

// routeScratch is a request's space for routing, reused so that routing
// allocates nothing.
type routeScratch struct {
	owners [maxReplicas]*backend
	idx    []int
	nodes  []kolco.Node
	parts  []*backend // a split request's server of each part
}

// route returns the servers a request for key goes to, in preference
// order: for a write in a pool with replicas, the server of every copy;
// otherwise the one server that answers it - the owner, or with replicas
// the copy a read goes to. It returns none when no server is live. The
// result lives in sc until the next call.
//
// Every keyed request is routed here: one place to consult health, or a
// previous placement, at lookup.
func (pl *placement) route(key []byte, write bool, sc *routeScratch) []*backend {
	if len(pl.servers) == 0 {
		return nil
	}
	if pl.replicas <= 1 {
		b := pl.servers[pl.pick.Index(key)]
		if pl.skipDown && b.health.isDown() {
			if b = pl.standIn(key, sc); b == nil {
				return nil
			}
		}
		sc.owners[0] = b
		return sc.owners[:1]
	}
	sc.idx, sc.nodes = pl.copies(sc.idx[:0], sc.nodes, key)
	if write {
		owners := sc.owners[:0]
		for _, i := range sc.idx {
			owners = append(owners, pl.servers[i])
		}
		return owners
	}
	sc.owners[0] = pl.readCopy(sc.idx)
	return sc.owners[:1]
}

// standIn returns the server that takes key while its owner is marked
// down: the first server not down in the key's preference list (LocateN,
// whose lists grow by extension: asked for twice as many each round), or
// nil when every server is down. The configured placement does not
// change, so only the down server's keys move, each to a server that is
// a function of the key and the servers down, and each goes back to its
// owner when it is restored, whatever the order of failures and restores.
func (pl *placement) standIn(key []byte, sc *routeScratch) *backend {
	return pl.standInBy(key, sc, nil)
}

// standInBy is standIn with the servers down marked in down, by index in
// pl.servers, instead of their health now when down is not nil.
func (pl *placement) standInBy(key []byte, sc *routeScratch, down []bool) *backend {
	k := pl.kolco
	ks := k.key(key)
	total := len(pl.servers)
	seen := 1 // the owner, known to be down
	for n := min(2, total); ; n = min(2*n, total) {
		var err error
		if sc.nodes, err = k.p.LocateN(sc.nodes[:0], ks, n); err != nil {
			return nil // not reached: the pool has servers
		}
		for _, node := range sc.nodes[min(seen, len(sc.nodes)):] {
			if i := k.lay.index(node.ID); i >= 0 && (down == nil && !pl.servers[i].health.isDown() || down != nil && !down[i]) {
				return pl.servers[i]
			}
		}
		if n >= total {
			return nil
		}
		seen = len(sc.nodes)
	}
}

// servesIfUp reports whether b, marked down, would be the server a read
// of key goes to were it up, every other server's health as it is: the
// keys its return takes back, its own and those it stands in for while
// their own server is out too. Under rehash these are the keys whose
// writes go elsewhere while b is out and whose copies on b grow old (see
// outage), whoever owns them by the configured placement.
func (pl *placement) servesIfUp(key []byte, b *backend, sc *routeScratch) bool {
	switch {
	case pl.replicas > 1: // b holds its own keys' copies, and no others
		full := pl.configured()
		sc.idx, sc.nodes = full.copies(sc.idx[:0], sc.nodes, key)
		for _, i := range sc.idx {
			if full.servers[i] == b {
				return true
			}
		}
		return false
	case pl.skipDown:
		owner := pl.servers[pl.pick.Index(key)]
		if owner == b || !owner.health.isDown() {
			return owner == b
		}
		return pl.firstUp(key, sc, b, nil) == b
	case pl.full != nil:
		alt := pl.ifUp[b]
		if alt == nil { // not reached: every server left out has its own
			alt = pl.full
		}
		return alt.servers[alt.pick.Index(key)] == b
	default:
		return pl.servers[pl.pick.Index(key)] == b
	}
}

// standsIn reports whether b, the server a read of key goes to, is not
// the key's own by the configured placement, every server up: it stands
// in for a server out (one copy: with replicas a key's servers are its
// copies).
func (pl *placement) standsIn(key []byte, b *backend) bool {
	if pl.replicas > 1 {
		return false
	}
	full := pl.configured()
	return full.servers[full.pick.Index(key)] != b
}

// servesBeside is servesIfUp with b, marked down too, counted up: whether
// d would serve key were both up. Under kolco's distributions a server
// ahead of d in key's preference list (its owner, or an earlier stand-in)
// takes the key from d while up; under twemproxy's, which place afresh
// over the servers up, it is servesIfUp, b's return not judged.
func (pl *placement) servesBeside(key []byte, d, b *backend, sc *routeScratch) bool {
	if !pl.skipDown {
		return pl.servesIfUp(key, d, sc)
	}
	owner := pl.servers[pl.pick.Index(key)]
	if owner == d || owner == b || !owner.health.isDown() {
		return owner == d
	}
	return pl.firstUp(key, sc, d, b) == d
}

// ownsPassedOver reports whether b owns key by the configured placement
// of a kolco distribution, which passes over b while it is down (one copy
// under rehash): then every write of key while b is out is routed around
// b, and noted in its outage with the server it went to (see noteWrites).
// False under twemproxy's distributions, which place every key afresh at
// each mark.
func (pl *placement) ownsPassedOver(key []byte, b *backend) bool {
	return pl.skipDown && pl.servers[pl.pick.Index(key)] == b
}

// movesOnReturn reports whether the return of b, marked down, moves key
// away from now, the server a read of it goes to while b is out: to b,
// for the keys servesIfUp names, and under twemproxy's distributions with
// one copy, which place every key afresh over the servers up (modula
// moves most keys; ketama with unequal weights some), to another server
// too. Such a key written while b is out is settled where b's return
// sends it (see outage).
//
// Under twemproxy's it is also a key now stands in for, another server
// out beside b: b's return with the other still out may leave it on now,
// but the returns together move it (modula: a key of r3's read at r0 with
// r3 alone out, and with r1 out beside it). Such a key is noted in b's
// outage, whose return settles it or notes it for the one still out
// (planMove), and a read at now is fenced. Before, no read of now's
// copy, which a change may have left there, was fenced (the fault
// schedule's seed 4024 read r0's copy of before r4 was added), and a
// write at now was noted in neither outage: once both were back, r3
// served its own copy of before.
func (pl *placement) movesOnReturn(key []byte, b, now *backend, sc *routeScratch) bool {
	if pl.full == nil || pl.replicas > 1 {
		return pl.servesIfUp(key, b, sc)
	}
	return pl.twemproxyIfUp(key, b) != now || pl.standsIn(key, now)
}

// returnTakes returns whether d's return, of a pool of cfg over
// backends whose placement is pl, after b's, takes a key from
// holder, where b's return leaves it. Under kolco's distributions a
// return takes back the keys d would serve with b up (servesBeside). Under twemproxy's,
// which place every key afresh over the servers up, it moves keys between
// servers up too, and b, still down in pl, is up by then: so it is asked of
// the placement over the servers up, b and d. Under modula, two servers
// out, a key written to a third server and settled onto the first back
// moves at the second's return to a fourth, whose copy is from before the
// outage (the fault schedule's seed 1895): noted only when d would serve
// it, the key was left there unsettled, and the first one's copy behind.
func (pl *placement) returnTakes(cfg *PoolConfig, backends []*backend, b, holder, d *backend) func(key []byte) bool {
	if pl.full == nil {
		var sc routeScratch
		return func(key []byte) bool { return pl.servesBeside(key, d, b, &sc) }
	}
	var up []*backend
	for _, s := range backends {
		if s == b || s == d || !s.health.isDown() {
			up = append(up, s)
		}
	}
	pick, err := newPicker(cfg, nodesOf(up))
	if err != nil { // not reached: the pool's servers placed before
		return func([]byte) bool { return true }
	}
	// A key the returns of the servers still out send home together is
	// taken too, though no one return alone moves it (with two or more
	// still out, each counts the others out): as movesOnReturn notes a
	// key read away from its home in every outage.
	return func(key []byte) bool { return up[pick.Index(key)] != holder || pl.standsIn(key, holder) }
}

// twemproxyIfUp is the server a read of key goes to once b is up, every
// other server's health as it is, under twemproxy's distributions with
// servers left out (pl.full set).
func (pl *placement) twemproxyIfUp(key []byte, b *backend) *backend {
	alt := pl.ifUp[b]
	if alt == nil { // not reached: every server left out has its own
		alt = pl.full
	}
	return alt.servers[alt.pick.Index(key)]
}

// returnMove returns, for a key b's return sends to a server other than
// b, that server and the one the key is read from now (see
// movesOnReturn), the same server when the return leaves the key where
// it is read now; nil when the return sends it to no server up but b.
// Whether a write of b's outage vouched for the copy read now is the
// caller's to judge (see planSettle).
func (pl *placement) returnMove(key []byte, b *backend, sc *routeScratch) (dst, src *backend) {
	if pl.full == nil || pl.replicas > 1 {
		return nil, nil
	}
	r := pl.route(key, false, sc)
	if len(r) == 0 {
		return nil, nil
	}
	dst = pl.twemproxyIfUp(key, b)
	if dst == b || dst.health.isDown() {
		return nil, nil
	}
	return dst, r[0]
}

// firstUp is standIn with up and also (nil for none) counted up whatever
// their health: the first server in key's preference list, after its
// owner, that is up or is one of them.
func (pl *placement) firstUp(key []byte, sc *routeScratch, up, also *backend) *backend {
	k := pl.kolco
	ks := k.key(key)
	total := len(pl.servers)
	seen := 1 // the owner
	for n := min(2, total); ; n = min(2*n, total) {
		var err error
		if sc.nodes, err = k.p.LocateN(sc.nodes[:0], ks, n); err != nil {
			return nil // not reached: the pool has servers
		}
		for _, node := range sc.nodes[min(seen, len(sc.nodes)):] {
			if i := k.lay.index(node.ID); i >= 0 && (pl.servers[i] == up || pl.servers[i] == also || !pl.servers[i].health.isDown()) {
				return pl.servers[i]
			}
		}
		if n >= total {
			return nil
		}
		seen = len(sc.nodes)
	}
}

// readCopy returns the copy, of those at idx, a read goes to: the first
// one not down in the proxy's zone, else the first one not down, else the
// first.
func (pl *placement) readCopy(idx []int) *backend {
	var up *backend
	for _, i := range idx {
		b := pl.servers[i]
		if b.health.isDown() {
			continue
		}
		if pl.zone == "" || b.node.Zone == pl.zone {
			return b
		}
		if up == nil {
			up = b
		}
	}
	if up != nil {
		return up
	}
	return pl.servers[idx[0]]
}

// copies appends to dst the indexes in pl.servers of the servers of key's
// copies, in preference order.
func (pl *placement) copies(dst []int, buf []kolco.Node, key []byte) ([]int, []kolco.Node) {
	if pl.kolco == nil { // not reached: Validate allows replicas with kolco's placements only
		return append(dst, pl.pick.Index(key)), buf
	}
	return pl.kolco.Replicas(dst, buf, key, pl.replicas)
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

// keyString returns key as a string without copying, for a lookup that
// only hashes it and keeps nothing: the request buffer is not reused until
// the lookup returns. Copying would cost one allocation per request.
func keyString(key []byte) string { return bytestr.String(key) }

// prior is a placement as it was when a change replaced it: where it sent
// each key. Its servers are the pool's own backends, or former ones for
// addresses the pool no longer has (see migrations.backendFor).
type prior struct {
	pl *placement
	// down marks, by index in pl.servers, the servers down when the
	// placement was replaced, for the stand-ins of kolco's
	// distributions under rehash: the writes of a down server's keys
	// went to them.
	down []bool
}

// owner returns the server that held key under v, or nil.
func (v *prior) owner(key []byte, sc *routeScratch) *backend {
	pl := v.pl
	if len(pl.servers) == 0 {
		return nil
	}
	i := pl.pick.Index(key)
	if pl.skipDown && v.down[i] {
		return pl.standInBy(key, sc, v.down)
	}
	return pl.servers[i]
}
