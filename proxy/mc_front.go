package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// memcacheFront is the memcached protocol's front: text and meta
// commands from clients, split over servers by key and merged back, as
// twemproxy's proto/nc_memcache.c does for its core.
type memcacheFront struct{}

// handshake does nothing: a memcached connection needs no preparing.
func (memcacheFront) handshake(*backend, net.Conn, uint8) error { return nil }

// dialects: memcached's one protocol.
func (memcacheFront) dialects() int { return 1 }

// probe asks the server for its version on a connection of its own.
func (memcacheFront) probe(ctx context.Context, b *backend) error {
	reply, err := mcAsk(ctx, b, b.pool.cfg.HealthCheck.Timeout, "version\r\n", memcache.CmdVersion)
	if err != nil {
		return err
	}
	if len(reply) < 8 || string(reply[:8]) != "VERSION " {
		return fmt.Errorf("%w: %q", memcache.ErrBadReply, reply)
	}
	return nil
}

// errNotStore is the error of a store's operations in a memcached pool,
// which the configuration refuses (see PoolConfig.checkStore).
var errNotStore = errors.New("a memcached pool is not a store")

func (memcacheFront) scan(context.Context, *backend, string, int) ([]string, string, error) {
	return nil, "", errNotStore
}

// moves: a memcached pool is no store, and moves no keys.
func (memcacheFront) moves(*pool) keyMoves { return noMoves{} }

func (memcacheFront) instance(context.Context, *backend) (string, error) {
	return "", errNotStore
}

// items reads curr_items from the server's stats.
func (memcacheFront) items(ctx context.Context, b *backend) (int64, error) {
	reply, err := mcAsk(ctx, b, b.pool.cfg.Timeout, "stats\r\n", memcache.CmdStats)
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(reply), "\r\n") {
		if v, ok := strings.CutPrefix(line, "STAT curr_items "); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("%w: stats without curr_items", memcache.ErrBadReply)
}

// settle writes to b the values src holds of keys, with their time to
// live and flags, each conditional on b's CAS value of it, read first (or
// on b holding none): a value another client of b wrote meanwhile stays.
// A key src holds none of is deleted from b. A key gate calls stale is
// left as b holds it.
func (memcacheFront) settle(ctx context.Context, b, src *backend, keys []string, gate func() (stale func(key string) bool, release func())) error {
	tokens := make([][]byte, 0, len(keys))
	b64 := make([]bool, 0, len(keys))
	names := make([]string, 0, len(keys))
	var casReq, fetchReq []byte
	for _, k := range keys {
		tok, isB64, ok := memcache.KeyToken(nil, []byte(k))
		if !ok {
			continue // no command can name it: no client wrote it either
		}
		tokens, b64, names = append(tokens, tok), append(b64, isB64), append(names, k)
		casReq = memcache.AppendMetaCas(casReq, tok, isB64)
		fetchReq = memcache.AppendMetaFetch(fetchReq, tok, isB64)
	}
	conn, err := b.dialOwn(ctx, b.pool.cfg.Timeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	held, err := mcAskAll(conn, b.pool.cfg.Timeout, casReq, len(tokens), memcache.CmdMetaGet)
	if err != nil {
		return err
	}
	srcConn, err := src.dialOwn(ctx, b.pool.cfg.Timeout)
	if err != nil {
		return fmt.Errorf("reading what %s holds of them: %w", src.addr, err)
	}
	defer srcConn.Close()
	values, err := mcAskAll(srcConn, b.pool.cfg.Timeout, fetchReq, len(tokens), memcache.CmdMetaGet)
	if err != nil {
		return fmt.Errorf("reading what %s holds of them: %w", src.addr, err)
	}
	if gate != nil {
		stale, release := gate()
		defer release() // until b has stored what it is sent
		n := 0
		for i, k := range names {
			if !stale(k) {
				tokens[n], b64[n], held[n], values[n] = tokens[i], b64[i], held[i], values[i]
				n++
			}
		}
		tokens, b64, held, values = tokens[:n], b64[:n], held[:n], values[:n]
	}
	writeReq, err := mcSettleWrites(tokens, b64, held, values, src.addr)
	if err != nil {
		return err
	}
	replies, err := mcAskAll(conn, b.pool.cfg.Timeout, writeReq, len(tokens), memcache.CmdMetaSet)
	if err != nil {
		return err
	}
	for _, r := range replies {
		if memcache.IsErrorReply(r) {
			return fmt.Errorf("%w: %q", memcache.ErrBadReply, r)
		}
	}
	return nil
}

// mcSettleWrites returns the meta requests that make b's copies of the
// keys tokens name what src holds, given held, b's cas replies, and
// values, src's fetch replies: a replace, an add, or a delete of b's
// copy, under the cas b's reply gave, so that a client's write since wins.
func mcSettleWrites(tokens [][]byte, b64 []bool, held, values [][]byte, src string) ([]byte, error) {
	var writeReq []byte
	now := time.Now().Unix()
	for i, tok := range tokens {
		cas, had, err := memcache.ParseMetaCas(held[i])
		if err != nil {
			return nil, err
		}
		v, found, err := memcache.ParseMetaValue(values[i])
		if err != nil {
			return nil, fmt.Errorf("reading what %s holds of them: %w", src, err)
		}
		exp, live := memcache.StoreTTL(v.TTL, now)
		switch {
		case found && live && had:
			writeReq = memcache.AppendMetaReplace(writeReq, tok, b64[i], exp, v.Flags, v.Data, cas)
		case found && live:
			writeReq = memcache.AppendMetaAdd(writeReq, tok, b64[i], exp, v.Flags, v.Data)
		case had:
			writeReq = memcache.AppendMetaDelete(writeReq, tok, b64[i], cas)
		default:
			writeReq = memcache.AppendMetaDelete(writeReq, tok, b64[i], 0) // b holds none: NF
		}
	}
	return writeReq, nil
}

// mcAskAll writes req, n meta requests, on conn and reads their n replies
// as replies to cmd, all within timeout.
func mcAskAll(conn net.Conn, timeout time.Duration, req []byte, n int, cmd memcache.Command) ([][]byte, error) {
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	if _, err := conn.Write(req); err != nil {
		return nil, err
	}
	rr := memcache.NewReplyReader(conn, 0)
	replies := make([][]byte, n)
	for i := range replies {
		reply, _, err := rr.Read(nil, cmd, nil)
		if err != nil {
			return nil, err
		}
		replies[i] = reply
	}
	return replies, nil
}

// dropCopies deletes keys from b, which held them for another server, on a
// connection of its own, all sent at once and their replies read after.
func (memcacheFront) dropCopies(ctx context.Context, b *backend, keys []string) error {
	conn, err := b.dialOwn(ctx, b.pool.cfg.Timeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	var buf, tokens []byte
	sent := 0
	for _, k := range keys {
		tok, b64, ok := memcache.KeyToken(tokens[:0], []byte(k))
		if !ok {
			continue // no command can name it: no client wrote it either
		}
		if b64 {
			tokens = tok[:0]
		}
		buf = memcache.AppendMetaDelete(buf, tok, b64, 0)
		sent++
	}
	if _, err := conn.Write(buf); err != nil {
		return err
	}
	rr := memcache.NewReplyReader(conn, 0)
	var reply []byte
	for range sent {
		if reply, _, err = rr.Read(reply[:0], memcache.CmdMetaDelete, nil); err != nil {
			return err
		}
		if _, err := memcache.ParseMetaDeleted(reply); err != nil {
			return err
		}
	}
	return nil
}

// empty sends flush_all on a connection of its own.
func (memcacheFront) empty(ctx context.Context, b *backend) error {
	reply, err := mcAsk(ctx, b, b.pool.cfg.Timeout, "flush_all\r\n", memcache.CmdFlushAll)
	if err != nil {
		return err
	}
	if string(reply) != "OK\r\n" {
		return fmt.Errorf("%w to flush_all: %q", memcache.ErrBadReply, reply)
	}
	return nil
}

// changes are warm when warm.enabled is set: their windows read up to
// warm.depth previous placements for warm.window, until warm.quiet
// fallbacks in a row found nothing; a sweep follows them when
// sweep.exclusive names a server.
func (memcacheFront) changes(cfg *PoolConfig) (depth int, window time.Duration, quiet int, sweep bool) {
	if cfg.Warm.on() {
		depth = cfg.Warm.Depth
	}
	return depth, cfg.Warm.Window, cfg.Warm.Quiet, len(cfg.Sweep.Exclusive) > 0
}

// sweeper deletes the copies a change left on the pool's exclusive
// servers (see mc_sweep.go).
func (memcacheFront) sweeper(p *pool) func(*migration) {
	return func(m *migration) { sweepOf(p).after(m) }
}

func (memcacheFront) presweep(ctx context.Context, p, next *pool) error {
	return sweepOf(p).presweep(ctx, sweepOf(next))
}

func (memcacheFront) errorReply(err error) []byte { return appendErrorReply(nil, err) }

// startPool starts nothing: a memcached pool runs nothing of its front's.
func (memcacheFront) startPool(context.Context, *pool) {}

// replicas: a memcached pool reads no replicas.
func (memcacheFront) replicas(*pool, string) []ReplicaStatus { return nil }

func (memcacheFront) commands() int { return int(memcache.CmdMetaDebug) + 1 }

func (memcacheFront) commandName(i int) string { return memcache.Command(i).String() }

// mcAsk sends one request to b on a connection of its own and reads its
// reply.
func mcAsk(ctx context.Context, b *backend, timeout time.Duration, req string, cmd memcache.Command) ([]byte, error) {
	conn, err := b.dialOwn(ctx, timeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(req)); err != nil {
		return nil, err
	}
	reply, _, err := memcache.NewReplyReader(conn, 0).Read(nil, cmd, nil)
	return reply, err
}
