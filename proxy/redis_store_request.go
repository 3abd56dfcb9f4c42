package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kolco-dev/kolco/proxy/internal/mover"
)

// A Redis store's move as a request sees it (see storeMove): before a
// request goes to its keys' servers, each key that may not be there yet
// moves there from the servers it had under the move's placements, one
// MIGRATE each. What a request asks of the move sits here with it -
// whether the move is open, where a key may be, which keys a MIGRATE took
// off a server already, the roles that keep MIGRATEs from waiting on each
// other - so that a request for a moving key runs this file of the move's
// and no other; the rest of the move (its loop, the mover, its figures,
// big keys' copies) runs beside the requests, not in them.

// moveKeys moves each key of r that may not be on its server yet there
// from the servers it had under the move's placements, one MIGRATE each,
// and returns when they are done: then r goes to the keys' servers as
// ever. A key moves whether it is read or written, and keys sharing a
// hash tag are on one server under every placement, so a multi-key
// command finds them all; but a read of one key that can be on one old
// server only reads it there, if it is there (see readOld): answered
// reports that r's reply is made. While the move is not open r waits, up
// to the pool's timeout, with the client's earlier requests answered
// first: the move opens once the pool this one replaced has answered its
// requests in flight, and a pipelining client's earlier requests may be
// in that pool, waiting to be answered with the round r is read in. The
// error is what r is answered with.
func (c *redisClient) moveKeys(p *pool, r *redisRequest, m keyMove) (answered bool, err error) {
	var read *redisRequest // may read its key where it is
	if r.req.Cmd.ReadOnly() && r.req.NumKeys() == 1 {
		read = r
	}
	moved, err := c.moveEach(p, m, r.start.Add(p.cfg.Timeout), r.req.NumKeys(), r.req.Key, read)
	r.moved = r.moved || moved
	return len(r.local) != 0, err
}

// moveEach is moveKeys for the n keys key gives, by deadline. It reports
// whether a key may have had to move (it had another server under one of
// the move's placements), but not for a read answered at the key's old
// server, which waited for no move (see readOld). A big key it copies in
// pieces (see keyCopies), and waits for, unless read is set, the request
// when it only reads its one key: that goes to the key's old server while
// the copy runs (c.fromSource).
func (c *redisClient) moveEach(p *pool, km keyMove, deadline time.Time, n int, key func(int) []byte, read *redisRequest) (moved bool, err error) {
	m, mv := km.(*storeMove), p.mover.(*storeMover)
	var sc routeScratch
	var from []*backend
	for i := range n {
		key := key(i)
		owners := c.place.route(key, false, &sc)
		if len(owners) == 0 {
			continue
		}
		to := owners[0]
		if from = m.sources(from[:0], key, to, &sc); len(from) == 0 {
			continue
		}
		moved = true
		if !m.isOpen() {
			if !c.endRound() {
				return moved, errClientGone
			}
			if err := m.wait(deadline); err != nil {
				return moved, err
			}
		}
		if read != nil && len(from) == 1 && mv.readsOld(p, read, key) {
			if answered, absent := c.readOld(m, read, from[0], key, deadline); answered || absent {
				return !answered, nil // absent: it reads the new server
			}
		}
		for _, src := range from {
			moved, big, err := mv.migrateOne(src, to, key, deadline)
			if !big && err == nil {
				m.tookOff(src.addr, key)
			}
			if big && err == nil {
				kc := mv.copyKey(key, src, copyBig(to, key))
				if !c.endRound() { // the earlier requests' replies do not wait for it
					return moved, errClientGone
				}
				var reading bool
				if reading, err = kc.await(context.Background(), deadline, read != nil); reading {
					c.fromSource = kc
					return true, nil
				}
				moved = false // counted by the mover, when it copied it
			}
			if err != nil {
				return moved, m.failedOne(src, to, err)
			}
			if moved {
				m.countRequest(p, src)
			}
		}
	}
	return moved, nil
}

// failedOne records that a request's MIGRATE of its key from src to dst
// failed with err, and returns the request's error.
func (m *storeMove) failedOne(src, dst *backend, err error) error {
	m.stats.failed.Add(1)
	line := fmt.Sprintf("%s -> %s: %v", src.addr, dst.addr, err)
	m.stats.lastErr.Store(&line)
	return fmt.Errorf("%w: moving the key from %s to %s: %w", errMoveFailed, src.addr, dst.addr, err)
}

// countRequest counts a key a request's MIGRATE moved from src.
func (m *storeMove) countRequest(p *pool, src *backend) {
	m.stats.onRequest.Add(1)
	m.stats.source(src.addr).onRequest.Add(1)
	p.stats.storeMoved.Add(1)
}

// tryAgainCause returns what a client reads after TRYAGAIN for a request
// whose keys could not move: the proxy's words, without the servers'
// addresses and the server's error, which the log and the move's figures
// (last_error) give.
func tryAgainCause(err error) string {
	if errors.Is(err, errMoveFailed) {
		return errMoveFailed.Error()
	}
	return withoutPrefix(err)
}

// errMoveFailed is the error of a request whose key could not be moved to
// its new server: it is still on its old one, which is the only one a read
// finds, and the client may try again.
var errMoveFailed = errors.New("the key could not move to its new server")

// migrateOne moves key from src to dst, on src's connection of the key, so
// that the key's requests reach src in order. It reports whether src held
// the key, and whether it is big (see keyCopies): then it is still on src,
// for the caller to copy.
func (mv *storeMover) migrateOne(src, dst *backend, key []byte, deadline time.Time) (moved, big bool, err error) {
	args, err := mv.argsTo(dst)
	if err != nil {
		return false, false, err
	}
	args = waitNoLonger(args, deadline)
	if mv.downAfter != nil { // Sentinels' pools only: a request runs nothing of it elsewhere
		args = timeoutAtMost(args, int64(mv.migrateTimeout(src, mv.cfg.Store.MigrateTimeout)))
	}
	st := src.pool.cfg.Store
	req := mover.AppendMigrate(nil, args, [][]byte{key}, int64(st.BigKeyElements), int64(st.BigKeyBytes))
	roles := mv.roles
	if err := roles.acquire(context.Background(), deadline, src.addr, dst.addr); err != nil {
		return false, false, err
	}
	defer roles.release(src.addr, dst.addr)
	done := make(chan struct{})
	ro := newRedisOp(func(*op) { close(done) })
	ro.buf, ro.deadline = req, deadline
	src.sendKeyed(&ro.op, keyHash(key))
	<-done
	if ro.err != nil {
		return false, false, ro.err
	}
	n, bigKeys, err := mover.ParseMigrate(ro.reply, 1)
	return n > 0, len(bigKeys) > 0, err
}

// argsTo returns migrateArgs of the pool's configuration for dst, made
// once for each server the move sends keys to: a request's MIGRATE reads
// them, where it built them each time, asking the configuration for
// dst's password.
func (mv *storeMover) argsTo(dst *backend) ([][]byte, error) {
	if a, ok := mv.args.Load(dst); ok {
		return a.([][]byte), nil
	}
	a, err := migrateArgs(mv.cfg, dst)
	if err == nil {
		mv.args.Store(dst, a)
	}
	return a, err
}

// waitNoLonger returns MIGRATE's arguments args with a timeout no longer
// than what is left until deadline (none when zero). A MIGRATE blocks its
// source until the target answers, and a target in a MIGRATE of its own
// to the source - another proxy's, which this proxy's roles cannot see -
// answers nothing until one of the two times out: the fault schedule's
// seeds 1074 and 1386 found servers of a fleet answering nothing for
// migrate_timeout (5 s) at a time. A request gives up at its deadline, so
// its MIGRATE need not wait longer
// (TestRequestMigrateHoldsItsSourceNoLongerThanTheRequest).
func waitNoLonger(args [][]byte, deadline time.Time) [][]byte {
	if deadline.IsZero() {
		return args
	}
	return timeoutAtMost(args, max(time.Until(deadline).Milliseconds(), 1))
}

// timeoutAtMost returns MIGRATE's arguments args with a timeout of ms
// milliseconds at most.
func timeoutAtMost(args [][]byte, ms int64) [][]byte {
	if t, err := strconv.ParseInt(string(args[migrateTimeoutArg]), 10, 64); err != nil || t <= ms {
		return args
	}
	out := slices.Clone(args)
	out[migrateTimeoutArg] = strconv.AppendInt(nil, ms, 10)
	return out
}

// migrateTimeoutArg is the index of the timeout in migrateArgs' arguments.
const migrateTimeoutArg = 5

// migrateArgs returns the arguments, up to KEYS, of the MIGRATE that
// moves keys to dst, with their time to live, replacing a copy dst may
// hold (one left by a MIGRATE whose reply was lost: the key on src is the
// one a read finds), giving dst's password when the pool has one for it.
func migrateArgs(cfg *PoolConfig, dst *backend) ([][]byte, error) {
	host, port, err := net.SplitHostPort(dst.addr)
	if err != nil {
		return nil, fmt.Errorf("MIGRATE needs a TCP address; %s is not one", dst.addr)
	}
	args := [][]byte{[]byte("MIGRATE"), []byte(host), []byte(port), nil, []byte(strconv.Itoa(cfg.RedisDB)),
		[]byte(strconv.Itoa(cfg.Store.MigrateTimeout)), []byte("REPLACE")}
	switch auth := cfg.serverAuth(dst.node); len(auth) {
	case 1:
		args = append(args, []byte("AUTH"), []byte(auth[0]))
	case 2:
		args = append(args, []byte("AUTH2"), []byte(auth[0]), []byte(auth[1]))
	}
	return args, nil
}

// errMoveClosed is the error of a request for a moving key while the move
// is not open yet: the client may try again.
var errMoveClosed = errors.New("the key is moving to another server, and the move waits for every proxy to place by the new placement: try again")

// isOpen reports whether keys may move.
func (m *storeMove) isOpen() bool {
	select {
	case <-m.open:
		return true
	default:
		return false
	}
}

// wait waits until keys may move, up to deadline.
func (m *storeMove) wait(deadline time.Time) error {
	if m.isOpen() {
		return nil
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-m.open:
		return nil
	case <-t.C:
		return errMoveClosed
	}
}

// sources appends to dst the servers key may be on other than n, its
// server now: its servers under the move's placements, each once, but
// those the mover has been through, and those a MIGRATE took key off
// already (see goneKeys). Such a server does not hold the key: SCAN
// lists every key present for the whole listing, the mover moved each,
// and since the move opened no request writes a moving key to its old
// server.
func (m *storeMove) sources(dst []*backend, key []byte, n *backend, sc *routeScratch) []*backend {
	for _, v := range m.priors {
		if o := v.owner(key, sc); o != nil && o.addr != n.addr && !slices.ContainsFunc(dst, func(b *backend) bool { return b.addr == o.addr }) &&
			!m.sourceDone(o.addr) && !m.goneFrom(o.addr, key) {
			dst = append(dst, o)
		}
	}
	return dst
}

// sourceDone reports whether the mover has been through the old server
// at addr.
func (m *storeMove) sourceDone(addr string) bool {
	v, ok := m.stats.bySource.Load(addr)
	return ok && v.(*sourceStats).done.Load()
}

// goneFrom reports whether a MIGRATE took key off the old server at addr
// during the move (see goneKeys).
func (m *storeMove) goneFrom(addr string, key []byte) bool {
	v, ok := m.stats.bySource.Load(addr)
	return ok && v.(*sourceStats).gone.has(key)
}

// tookOff records that a request's MIGRATE took key off the old server
// at addr (see goneKeys).
func (m *storeMove) tookOff(addr string, key []byte) { m.stats.source(addr).gone.add(key) }

// source returns the figures of the old server at addr.
func (st *moveStats) source(addr string) *sourceStats {
	if v, ok := st.bySource.Load(addr); ok {
		return v.(*sourceStats)
	}
	ss := new(sourceStats)
	ss.share.Store(-1)
	v, _ := st.bySource.LoadOrStore(addr, ss)
	return v.(*sourceStats)
}

// goneKeys are keys a MIGRATE took off an old server during a move, by
// the mover or by a request (moved, or not there: a MIGRATE of a key the
// server does not hold answers NOKEY). Since the move opened no request
// writes a moving key to its old server, so such a key is not there for
// the rest of the move, and a request for it goes to its new server
// without a MIGRATE of its own. That MIGRATE, one key and NOKEY, cost
// little on the server but waited behind the mover's there: a fifth of
// the clients' requests while a fifth server was added, the slowest of
// them. Up to goneMax keys are kept for each old server, some 60 bytes
// each beside the key; past that a request MIGRATEs as before.
type goneKeys struct {
	// mu guards keys.
	mu   sync.RWMutex
	keys map[string]struct{}
}

// goneMax bounds the keys a goneKeys keeps: some 20 MB with keys of 20
// bytes.
const goneMax = 1 << 18

// add records keys.
func (g *goneKeys) add(keys ...[]byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.keys == nil {
		g.keys = make(map[string]struct{})
	}
	for _, k := range keys {
		if len(g.keys) >= goneMax {
			return
		}
		g.keys[string(k)] = struct{}{}
	}
}

// has reports whether key is recorded.
func (g *goneKeys) has(key []byte) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	_, ok := g.keys[string(key)]
	return ok
}

// migrateRoles keeps a proxy's MIGRATEs from waiting on each other. A
// MIGRATE blocks its source until the target answers, and a server that
// is itself in a MIGRATE answers nothing meanwhile: a MIGRATE from A to B
// and one from B to A at once each wait for the other until
// migrate_timeout, and so does any cycle of them. So a server is, at any
// moment, the source of a proxy's MIGRATEs or their target, never both;
// MIGRATEs in one direction run side by side. The roles outlive a reload:
// the pool that replaces another takes its roles with its MIGRATEs in
// flight.
type migrateRoles struct {
	mu      sync.Mutex
	role    map[string]int // > 0: the source of that many; < 0: the target
	changed chan struct{}  // closed and replaced when a MIGRATE ends
}

func newMigrateRoles() *migrateRoles {
	return &migrateRoles{role: map[string]int{}, changed: make(chan struct{})}
}

// acquire waits until src may be a source and dst a target, and takes
// both roles; it fails when ctx ends or at deadline (none when zero).
func (m *migrateRoles) acquire(ctx context.Context, deadline time.Time, src, dst string) error {
	var timer <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timer = t.C
	}
	for {
		m.mu.Lock()
		if m.role[src] >= 0 && m.role[dst] <= 0 {
			m.role[src]++
			m.role[dst]--
			m.mu.Unlock()
			return nil
		}
		changed := m.changed
		m.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-timer:
			return fmt.Errorf("%s is the target of a MIGRATE still running, or %s its source", src, dst)
		}
	}
}

// release gives back the roles acquire took.
func (m *migrateRoles) release(src, dst string) {
	m.mu.Lock()
	for addr, d := range map[string]int{src: -1, dst: 1} {
		if m.role[addr] += d; m.role[addr] == 0 {
			delete(m.role, addr)
		}
	}
	close(m.changed)
	m.changed = make(chan struct{})
	m.mu.Unlock()
}
