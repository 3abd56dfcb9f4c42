package proxy

import (
	"bytes"
	"time"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// A read of a key the move has not moved yet, at the key's old server.
// A request for a key that may be on its old server MIGRATEs it first
// (see moveEach); for a read that MIGRATE is most of its cost, and of its
// old server's: it holds the server for a round trip to the new one, some
// 700 µs a key against 27 µs a key in the mover's batches, and while keys
// move such requests were 6-8% of the clients' requests, enough to set
// their p99 and, through it, slow the mover down (docs/stores.md,
// Measured). So a read of one key whose only possible old server is src
// asks src, on src's connection of the key, as the big key's copy reads
// it there (keyCopy.sendRead):
//
//	MULTI / EXISTS key / the read / EXEC
//
// When src holds the key, the read's reply is the one in EXEC's; when it
// does not, the key is recorded gone from src (goneKeys) and the read
// goes to the key's new server as ever. Whether src holds the key is
// decided by EXISTS in the same transaction as the read, not from the
// read's reply, which does not say: HGET answers nil for a field a hash
// lacks, TTL -2 and EXISTS 0 for a key that is elsewhere.
//
// Why this is linearizable. Since the move opened no request writes a
// moving key at its old server (see storeMove): a write of the key first
// MIGRATEs it off src - one step at src, which sends the key to its new
// server and deletes it, or answers NOKEY - and only then writes at the
// new server. So while src holds the key its value there is the key's
// latest, no write of it has been acknowledged at the new server, and a
// read that finds it at src takes its place in the history at the
// moment src ran its transaction: before every later MIGRATE of the key,
// so before every write that follows. A read that does not find it at
// src finds it (or its absence) where the writes went, the new server; a
// write acknowledged before the read began had its MIGRATE run at src
// before the read's transaction there, so the read does not find the key
// at src, and reads the new server. The key's TTL holds at src as at its
// new server: a MIGRATE takes it along, and an expired key is absent at
// both. The mover's MIGRATEs and a big key's copy leave the key at src
// whole until one step at src deletes it, so a read finds src's copy or,
// once deleted, the new server's.
//
// The read is asked and answered before the client's next request is
// routed, as a MIGRATE is: a read answered by the new server instead is
// sent from the client's reader, in the order of its requests, not from
// src's reply, which a later write of the client's could pass. What stays
// on the MIGRATE: a key with several possible old servers (a move that
// extends an unfinished one), a big key under copy (it reads its source
// under the copy's lock, see keyCopy), a pool on Sentinel (a failover
// that loses an acknowledged MIGRATE's delete would bring the key back at
// its old server), and a pool with a server out (its reads fence
// stand-ins' copies first, see outages.fenceReads).

// probeSkip is how many replies come before EXEC's in readOld's
// transaction: MULTI's +OK, then +QUEUED for EXISTS and for the read.
const probeSkip = 3

// readsOld reports whether r, a read of key alone whose one possible old
// server is src, may read key at src (see readOld).
func (mv *storeMover) readsOld(p *pool, r *redisRequest, key []byte) bool {
	switch r.req.Cmd.Class() {
	case redis.ClassSingle, redis.ClassSameServer, redis.ClassSplit:
	default:
		return false // refused, or answered by the proxy: as ever
	}
	if p.cfg.Membership != nil && p.cfg.Membership.Sentinel != nil || p.outages.count.Load() != 0 {
		return false
	}
	if scansMembers(r.req.Cmd.Name()) {
		// A cursor of src's means nothing at the new server, whose hash
		// tables are seeded apart: an iteration the mover's MIGRATE
		// crosses would skip members. Its first call moves the key, as
		// before, and the iteration runs where the key stays.
		return false
	}
	return !mv.copies.running(key)
}

// readOld asks src, the one server other than its new one that key may be
// on, for r, a read of key alone, and key's presence there, in one
// transaction (see above). It reports whether src held key: then r's
// reply is made (r.local); and whether src did not: then key is recorded
// gone from src. Neither when the transaction failed (an error, or EXEC
// refused): then key moves as any other.
func (c *redisClient) readOld(m *storeMove, r *redisRequest, src *backend, key []byte, deadline time.Time) (answered, absent bool) {
	done := make(chan struct{})
	ro := newRedisOp(func(*op) { close(done) })
	ro.skip = probeSkip
	ro.buf = append(ro.buf, "*1\r\n$5\r\nMULTI\r\n"...)
	ro.buf = redis.AppendArgs(ro.buf, [][]byte{[]byte("EXISTS"), key})
	ro.buf = redis.AppendRequest(ro.buf, &r.req)
	ro.buf = append(ro.buf, "*1\r\n$4\r\nEXEC\r\n"...)
	// The client's protocol's connection, whose reply the client reads.
	ro.deadline, ro.dialect = deadline, r.dialect
	// The reply's values count against the client's limits as any
	// server's reply does (op.Reserve): one past them is dropped, and the
	// key moves as any other.
	ro.charge = c.charge
	src.sendKeyed(&ro.op, keyHash(key))
	<-done
	if ro.err == nil && bytes.HasPrefix(ro.reply, execHeld) {
		r.local = append(r.local[:0], ro.reply[len(execHeld):]...)
		r.held += ro.held // released once the reply is written (call.finish)
		return true, false
	}
	c.charge.release(ro.held)
	if ro.err == nil && bytes.HasPrefix(ro.reply, execGone) {
		m.tookOff(src.addr, key)
		return false, true
	}
	return false, false
}

// scansMembers reports whether the command named name iterates a key's
// members by a cursor of its server's.
func scansMembers(name string) bool {
	switch name {
	case "hscan", "sscan", "zscan":
		return true
	}
	return false
}

// EXEC's reply to readOld's transaction begins with one of these: EXISTS
// found the key (the read's reply follows), or did not.
var (
	execHeld = []byte("*2\r\n:1\r\n")
	execGone = []byte("*2\r\n:0\r\n")
)

// running reports whether a copy of key is under way.
func (k *keyCopies) running(key []byte) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.byKey[string(key)]
	return ok
}
