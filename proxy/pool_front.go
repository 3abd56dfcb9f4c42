package proxy

import (
	"context"
	"io"
	"net"
	"time"
)

// front is one protocol's part of the proxy, as the table of functions in
// twemproxy's nc_proto.h is: the engine - pools, servers and their
// connections, placement, health, budgets, changes - asks its pool's
// front for everything that depends on the protocol and names no protocol
// itself. memcacheFront (mc_*.go) and redisFront (redis_*.go) implement
// it; each reads its requests, splits them over servers, merges and
// writes their replies with its own codec package (proxy/memcache,
// proxy/redis).
type front interface {
	// serve serves one client connection until the client closes, quits
	// or is drained, or the server shuts down.
	serve(c *client)
	// replies returns the reader of the replies on a new connection to b.
	replies(r io.Reader, b *backend) replies
	// handshake readies a new connection to b of dialect (see
	// op.dialect) before its first request (Redis's AUTH and SELECT, and
	// HELLO 3 for its RESP3 dialect); the error is a [*ServerError].
	handshake(b *backend, conn net.Conn, dialect uint8) error
	// dialects is the number of kinds of server connection the front
	// keeps (see op.dialect): memcached one, Redis two (RESP2, RESP3).
	dialects() int
	// probe asks b, on a connection of its own, whether it serves.
	probe(ctx context.Context, b *backend) error
	// settle readies b's copies of keys, which were written to src
	// while b was marked down, before b serves them again (see outage):
	// it replaces them with the values src holds, or removes those src
	// holds none of, leaving a value another client of b wrote
	// meanwhile; gate, when not nil, is asked between reading src and
	// writing b (see outages.gate). An error keeps b down.
	settle(ctx context.Context, b, src *backend, keys []string, gate func() (stale func(key string) bool, release func())) error
	// items returns how many items b holds: memcached's curr_items,
	// the DBSIZE of a Redis pool's database.
	items(ctx context.Context, b *backend) (int64, error)
	// instance names the process b runs (Redis's run_id), which changes
	// when the server starts again: a store's move tells a server that
	// came back, without the keys it held, from one that kept them.
	instance(ctx context.Context, b *backend) (string, error)
	// scan lists the keys b holds from cursor, about count of them, and
	// returns the cursor to go on from, "0" at the end (Redis's SCAN).
	scan(ctx context.Context, b *backend, cursor string, count int) (keys []string, next string, err error)
	// listKeys calls each for every key b holds, on a connection of its
	// own, until each returns an error, which it returns.
	listKeys(ctx context.Context, b *backend, each func(key string) error) error
	// sizes returns the length of the value b holds of each of keys, -1
	// for one it holds none of, asked on a connection of its own; nil
	// when the front does not tell values' lengths (Redis: a value is not
	// one string).
	sizes(ctx context.Context, b *backend, keys []string) ([]int64, error)
	// holds reports whether b holds each of keys, asked on a connection
	// of its own.
	holds(ctx context.Context, b *backend, keys []string) ([]bool, error)
	// moves makes p's side of its store's moves (see keyMoves), as p is
	// made: Redis's (redis_store_*.go), or noMoves.
	moves(p *pool) keyMoves
	// dropCopies removes keys from b, which held them for another server
	// while it was out.
	dropCopies(ctx context.Context, b *backend, keys []string) error
	// empty removes every item b holds, before an exclusive server the
	// pool did not have takes keys (see Sweep.Exclusive), or when what it
	// missed while it was out is unknown.
	empty(ctx context.Context, b *backend) error
	// heldKeys lists b's keys and returns those keep reports true for,
	// the copies a change gave b while it was out, for its return to
	// remove (see outages.sweepGained); none from a front whose changes
	// leave copies that nothing sweeps.
	heldKeys(ctx context.Context, b *backend, keep func(key []byte) bool) ([]string, error)
	// changes returns the rules of the changes of a pool of cfg that move
	// keys (see migration): how many of the placements a change replaces
	// its window reads on a miss, 0 for none (a cold change); how long the
	// window stays open at most, and after how many fallbacks in a row
	// that found nothing it closes; whether a sweep follows it.
	changes(cfg *PoolConfig) (depth int, window time.Duration, quiet int, sweep bool)
	// sweeper returns what runs once a migration's window has closed
	// and settles m, or leaves it to the loop when the sweep is stopped or
	// m replaced (see migration): memcached's sweep of the copies a change
	// left behind. Nil when the front does not sweep: m is then settled
	// at once.
	sweeper(p *pool) func(m *migration)
	// presweep readies next, which replaces p, before it serves: each
	// server's copies of keys next gives it and p's placement does not,
	// left by an earlier change no sweep has removed yet, are removed
	// (see mc_sweep.go). An error keeps p.
	presweep(ctx context.Context, p, next *pool) error
	// errorReply returns the reply a client reads for a request that
	// failed with err, as a client refused over max_client_connections
	// gets it.
	errorReply(err error) []byte
	// commands is the number of the front's commands; commandName names
	// command i of them in the figures, as its clients call it.
	commands() int
	commandName(i int) string
	// startPool starts what the front runs beside a pool for the pool's
	// life, until ctx ends, under the pool's wait group (a Redis pool's
	// replica reads).
	startPool(ctx context.Context, p *pool)
	// replicas returns the replicas the front reads for server of p
	// (a Redis pool's replica reads), or nil.
	replicas(p *pool, server string) []ReplicaStatus
}

// ReplicaStatus is a replica a pool reads from, as the admin endpoint
// reports it.
type ReplicaStatus struct {
	Addr string `json:"addr"`
	// LagMs is how far behind its primary the replica is, in
	// milliseconds; -1 when not known (it did not answer).
	LagMs float64 `json:"lag_ms"`
	// Readable reports that reads go to it: its lag is known and within
	// replica_reads.max_lag.
	Readable bool `json:"readable"`
}

// replies reads a server's replies, each into the op it answers, in its
// front's protocol.
type replies interface {
	// Wait blocks until the next reply has begun to arrive.
	Wait() error
	// Buffered returns the bytes read from the server and not yet read
	// as replies.
	Buffered() int
	// read reads the next reply into o. After an error for which inStep
	// reports true the stream is still in step; after any other the
	// connection must be closed.
	read(o *op) error
	// inStep reports whether a read error left the stream in step: a
	// reply over the limits, or with no room in the buffers, read and
	// dropped; or a server's answer that it is still loading its data
	// ([ErrServerLoading]).
	inStep(err error) bool
	// badReply returns the protocol's error for bytes that are no reply.
	badReply() error
}
