package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// Transactions: MULTI, EXEC, DISCARD, WATCH and UNWATCH, served when every
// key of the transaction is on one server. The proxy queues the commands
// itself, answering +QUEUED once it has checked each (its keys on the
// transaction's server, the command one a transaction may hold), and at
// EXEC sends MULTI, the commands and EXEC at once on a server connection
// pinned to the client, whose reply to EXEC is the client's. WATCH goes
// to its keys' server on that connection when it is asked, so that a
// write by any client between the WATCH and the EXEC aborts the EXEC as
// on the server itself.
//
// Queued on the proxy rather than sent one by one: a transaction's
// commands are then one round trip to the server, and a command refused
// at queue time (a key on another server, a command a transaction cannot
// hold) never reaches a server at all; it fails the transaction, and EXEC
// answers -EXECABORT, as redis-server answers after a command it refused
// while queueing.
//
// A store's move (see storeMove) finishes for the transaction's keys
// before the EXEC or WATCH is sent: each key is moved to its server now,
// as any request's keys are. A move that has not opened yet is waited for
// up to the pool's timeout, after which the client gets -TRYAGAIN and the
// transaction is discarded. A change of the pool between a WATCH and its
// EXEC that gives the keys another server answers the EXEC with a nil
// reply, as if a watched key had been written: it is no longer where it
// was watched.

// redisTx is a client's transaction state: the commands it queued, the
// server whose keys it watches and the server connection pinned to it.
type redisTx struct {
	multi  bool // between MULTI and EXEC or DISCARD
	failed bool // a command was refused while queued
	// queue holds the queued requests, encoded; queued counts them.
	queue  []byte
	queued int
	// keys are copies of their keys, and writes is set when one of
	// them may write.
	keys   [][]byte
	writes bool
	// watched is the server of the keys WATCH holds, nil for none;
	// watchLost is set when the connection that watched them closed
	// before the EXEC, which then fails as if they were written.
	watched   *backend
	watchLost bool
	pin       *redisPin
}

// redisPin is a server connection of a client's own.
type redisPin struct {
	b    *backend
	conn net.Conn
	rr   *redis.ReplyReader
	// unwatch is set when the connection may still watch keys the
	// client let go of: UNWATCH goes before its next request.
	unwatch bool
}

// The transaction's commands, looked up once.
var (
	cmdMulti   = redis.Lookup("multi")
	cmdExec    = redis.Lookup("exec")
	cmdDiscard = redis.Lookup("discard")
	cmdWatch   = redis.Lookup("watch")
	cmdUnwatch = redis.Lookup("unwatch")
	cmdPing    = redis.Lookup("ping")
	cmdEcho    = redis.Lookup("echo")
)

// transaction serves a transaction command, or queues a command of an
// open transaction; r's reply is made here.
func (c *redisClient) transaction(p *pool, r *redisRequest) {
	tx := &c.tx
	switch cmd := r.req.Cmd; {
	case cmd == cmdMulti && tx.multi:
		r.local = redis.AppendError(r.local, "ERR MULTI calls can not be nested")
	case cmd == cmdMulti:
		tx.multi = true
		r.local = redis.AppendOK(r.local)
	case cmd == cmdExec && !tx.multi:
		r.local = redis.AppendError(r.local, "ERR EXEC without MULTI")
	case cmd == cmdExec:
		c.exec(p, r)
	case cmd == cmdDiscard && !tx.multi:
		r.local = redis.AppendError(r.local, "ERR DISCARD without MULTI")
	case cmd == cmdDiscard:
		tx.end()
		r.local = redis.AppendOK(r.local)
	case cmd == cmdWatch && tx.multi:
		r.local = redis.AppendError(r.local, "ERR WATCH inside MULTI is not allowed")
	case cmd == cmdWatch:
		c.watch(p, r)
	case cmd == cmdUnwatch && !tx.multi:
		tx.unwatch()
		r.local = redis.AppendOK(r.local)
	default:
		c.queue(p, r)
	}
}

// end forgets the transaction and what it watched: the server has done
// so too when it ran EXEC; otherwise UNWATCH is owed.
func (tx *redisTx) end() {
	tx.unwatch()
	clear(tx.keys)
	tx.multi, tx.failed, tx.queue, tx.queued, tx.keys, tx.writes = false, false, tx.queue[:0], 0, tx.keys[:0], false
	if cap(tx.queue) > byRef {
		tx.queue = nil
	}
}

// unwatch lets go of the watched keys; the pinned connection sends
// UNWATCH before its next request.
func (tx *redisTx) unwatch() {
	if tx.watched != nil && tx.pin != nil {
		tx.pin.unwatch = true
	}
	tx.watched, tx.watchLost = nil, false
}

// errNoMulti is the reply to a command a transaction cannot hold through
// the proxy; it names the rule.
func noMulti(cmd *redis.Command, why string) string {
	return "ERR '" + cmd.Name() + "' inside a transaction is not supported by the proxy: " + why
}

// queue checks a command of an open transaction and queues it, or
// refuses it and fails the transaction.
func (c *redisClient) queue(p *pool, r *redisRequest) {
	tx, req := &c.tx, &r.req
	cmd := req.Cmd
	refuse := func(msg string) {
		tx.failed = true
		r.local = redis.AppendError(r.local, msg)
	}
	switch {
	case cmd.Class() == redis.ClassRefused:
		tx.failed = true
		r.local = append(r.local, cmd.Refusal().Reply...)
		return
	case cmd.Class() == redis.ClassLocal && cmd != cmdPing && cmd != cmdEcho:
		refuse(noMulti(cmd, "it changes the connection's state"))
		return
	case cmd.Class() == redis.ClassEveryServer:
		refuse(noMulti(cmd, "it reads every server, and a transaction runs on one"))
		return
	case cmd.Class() == redis.ClassPubSub:
		refuse(noMulti(cmd, "pub/sub routes its channels apart from the transaction's keys"))
		return
	case p.cfg.MaxKeys > 0 && req.NumKeys() > p.cfg.MaxKeys:
		refuse(fmt.Sprintf("ERR %d keys in one request, over the proxy's max_keys %d", req.NumKeys(), p.cfg.MaxKeys))
		return
	}
	if req.NumKeys() > 0 {
		b, err := c.keysServer(p, req.NumKeys(), req.Key)
		if err == nil {
			err = tx.sameAsWatched(b)
		}
		if err == nil && len(tx.keys) > 0 {
			var first *backend
			if first, err = c.keysServer(p, 1, func(int) []byte { return tx.keys[0] }); err == nil && !sameServer(first, b) {
				err = errTxCrossServer
			}
		}
		if err != nil {
			refuse(txErrorText(cmd, err))
			return
		}
	}
	for i := range req.NumKeys() {
		tx.keys = append(tx.keys, bytes.Clone(req.Key(i)))
	}
	tx.writes = tx.writes || !cmd.ReadOnly()
	tx.queue = redis.AppendRequest(tx.queue, req)
	tx.queued++
	r.local = append(r.local, "+QUEUED\r\n"...)
}

// The errors of a transaction's keys, each naming the rule.
var (
	errTxCrossServer = errors.New("a transaction's keys must all be on one server, and these map to different servers; hash tags can keep them on one ({user1}:a, {user1}:b)")
	errTxWatched     = errors.New("a transaction's keys must all be on one server, and these map to another server than the keys it watches; hash tags can keep them on one ({user1}:a, {user1}:b)")
	errTxMoved       = errors.New("the transaction's keys map to different servers since they were queued: the pool's servers changed")
	// errTxDrained ends a client drained in a transaction, or watching
	// keys: its connection is closed rather than handed to another
	// process, which would not know them.
	errTxDrained = errors.New("drained in a transaction")
)

// txErrorText is the error reply's text for a command whose keys cannot be
// in the transaction.
func txErrorText(cmd *redis.Command, err error) string {
	return "ERR keys of '" + cmd.Name() + "' in a transaction: " + err.Error()
}

// sameServer reports whether a and b are the same server, though of two
// pools (a reload's).
func sameServer(a, b *backend) bool { return a.node.ID == b.node.ID && a.addr == b.addr }

// sameAsWatched checks that b is the server whose keys the client watches.
func (tx *redisTx) sameAsWatched(b *backend) error {
	if w := tx.watched; w != nil && !sameServer(w, b) {
		return errTxWatched
	}
	return nil
}

// keysServer returns the one server of the n keys key gives, under p's
// placement now.
func (c *redisClient) keysServer(p *pool, n int, key func(int) []byte) (*backend, error) {
	c.place, c.none = p.place.Load(), len(p.backends)
	s := -1
	for i := range n {
		k := c.server(key(i))
		if k == c.none {
			return nil, ErrNoServers
		}
		if s >= 0 && k != s {
			return nil, errTxCrossServer
		}
		s = k
	}
	return p.backends[s], nil
}

// watch serves WATCH: on the pinned connection to its keys' server, once
// the keys are there.
func (c *redisClient) watch(p *pool, r *redisRequest) {
	req := &r.req
	b, err := c.keysServer(p, req.NumKeys(), req.Key)
	if err == nil {
		err = c.tx.sameAsWatched(b)
	}
	if err != nil {
		r.local = redis.AppendError(r.local, txErrorText(req.Cmd, err))
		return
	}
	if !c.settleKeys(p, r, req.NumKeys(), req.Key) {
		return
	}
	reply, err := c.tx.pinned(p, b, redis.AppendRequest(nil, req), 1, c.cs.proto)
	if err != nil {
		r.answerError(err)
		return
	}
	if bytes.Equal(reply, []byte("+OK\r\n")) {
		c.tx.watched = b
	}
	r.local = append(r.local, reply...)
}

// settleKeys readies the keys of a request about to go to their server on
// the pinned connection: the client's earlier requests answered first,
// the pool's returns held for a write (see outage), and the keys moved to
// their server in a store whose keys move. It reports false when r has
// been answered instead.
func (c *redisClient) settleKeys(p *pool, r *redisRequest, n int, key func(int) []byte) bool {
	if !c.endRound() {
		r.answerError(errClientGone)
		return false
	}
	c.place = p.place.Load()
	if m := c.place.move; m != nil && n > 0 {
		if _, err := c.moveEach(p, m, r.start.Add(p.cfg.Timeout), n, key, nil); err != nil {
			r.local = redis.AppendError(r.local, "TRYAGAIN "+tryAgainCause(err))
			return false
		}
	}
	return true
}

// exec serves EXEC: the queued commands in one transaction on the pinned
// connection to their server.
func (c *redisClient) exec(p *pool, r *redisRequest) {
	tx := &c.tx
	defer tx.end()
	switch {
	case tx.failed:
		r.local = append(r.local, "-EXECABORT Transaction discarded because of previous errors.\r\n"...)
		return
	case tx.watchLost:
		r.local = redis.AppendNullArray(r.local, c.cs.proto)
		return
	case tx.queued == 0 && tx.watched == nil:
		r.local = redis.AppendArrayHeader(r.local, 0)
		return
	}
	var b *backend
	var err error
	switch {
	case len(tx.keys) > 0:
		if b, err = c.keysServer(p, len(tx.keys), func(i int) []byte { return tx.keys[i] }); err == errTxCrossServer {
			err = errTxMoved
		}
	case tx.watched != nil:
		b = tx.watched
	default:
		if b = anyServer(p.backends); b == nil {
			err = ErrNoServers
		}
	}
	if err != nil {
		r.local = redis.AppendError(r.local, "EXECABORT Transaction discarded because of: "+withoutPrefix(err))
		return
	}
	if tx.sameAsWatched(b) != nil {
		// The watched keys' server changed: they are no longer where
		// they were watched, as if written.
		r.local = redis.AppendNullArray(r.local, c.cs.proto)
		return
	}
	if tx.writes {
		if p.outages.keeps {
			r.guardWrite(p, c.batch.flush, len(tx.keys), func(i int) []byte { return tx.keys[i] })
		}
		if p.cfg.ReplicaReads.Enabled {
			c.wrote.note(b)
		}
	}
	if !c.settleKeys(p, r, len(tx.keys), func(i int) []byte { return tx.keys[i] }) {
		return
	}
	req := redis.AppendArgs(nil, [][]byte{[]byte("MULTI")})
	req = append(req, tx.queue...)
	req = redis.AppendArgs(req, [][]byte{[]byte("EXEC")})
	reply, err := tx.pinned(p, b, req, tx.queued+2, c.cs.proto)
	if err != nil {
		r.answerError(err)
		return
	}
	tx.watched = nil // EXEC unwatches
	r.local = append(r.local, reply...)
}

// pinned sends req, n requests, on the client's connection to b (opened
// now if it has none to b, speaking proto), and returns the last one's
// reply. A connection that fails is closed.
func (tx *redisTx) pinned(p *pool, b *backend, req []byte, n int, proto redis.Proto) ([]byte, error) {
	pin := tx.pin
	if pin != nil && !sameServer(pin.b, b) {
		if tx.watched != nil {
			return nil, errTxWatched // callers check first
		}
		tx.closePin()
		pin = nil
	}
	if pin == nil {
		conn, err := redisDial(context.Background(), b, proto)
		if err != nil {
			return nil, err
		}
		pin = &redisPin{b: b, conn: conn, rr: redis.NewReplyReader(conn, redis.ReplyLimits{MaxBulk: p.cfg.MaxValueSize, RESP3: proto == redis.RESP3})}
		tx.pin = pin
	}
	if pin.unwatch {
		req = append(redis.AppendArgs(nil, [][]byte{[]byte("UNWATCH")}), req...)
		n++
	}
	reply, err := pin.do(req, n, p.cfg.Timeout)
	if err != nil {
		tx.closePin()
		return nil, serverError(b.addr, "transaction", err)
	}
	pin.unwatch = false
	return reply, nil
}

// do writes req, n requests, and reads their replies, within timeout,
// and returns the last one.
func (pin *redisPin) do(req []byte, n int, timeout time.Duration) ([]byte, error) {
	if err := pin.conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	if _, err := pin.conn.Write(req); err != nil {
		return nil, err
	}
	var reply []byte
	for range n {
		var err error
		if reply, _, err = pin.rr.Read(reply[:0], nil); err != nil {
			return nil, err
		}
	}
	return bytes.Clone(reply), nil
}

// closePin closes the client's pinned connection: what it watched is
// lost, and the transaction's EXEC fails.
func (tx *redisTx) closePin() {
	if pin := tx.pin; pin != nil {
		pin.conn.Close()
		tx.pin = nil
		tx.watchLost = tx.watched != nil
	}
}
