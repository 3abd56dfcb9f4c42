package mover

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kolco-dev/kolco/internal/resp"
)

// Copy moves one big key from its source to its target piece by piece,
// so that neither server is held for longer than a piece: the key is
// read in chunks (HSCAN, SSCAN, ZSCAN, LRANGE, XRANGE, GETRANGE) and
// written into a temporary key on the target, which RENAME then makes the
// key, with the time to live it had (PEXPIREAT of its expiry); then the
// source's copy is deleted. The source's copy is the one reads find until
// then: the caller holds the key's writes (a write of a key that may be
// on its old server moves it first), so it does not change meanwhile.
//
// Several proxies, or one started again after a crash, may copy a key at
// once. The target holds a lock for each key copied, a lease renewed by
// every piece; only the lock's holder writes the temporary key or renames
// it, each write a script that checks the lock first, and it releases the
// lock only after it deleted the source's copy. So one whose lease ran
// out (paused, or killed) writes nothing after another took the lock, and
// the one that takes the lock first checks whether the key is still on
// the source: if not, another moved it, and there is nothing to do. A
// copy left unfinished leaves the source's copy whole; one that failed
// unlinks its temporary key as it gives the lock up, and one that died
// leaves on the target a temporary key and a lock that expire by
// themselves; the next copy unlinks that temporary key before it
// writes, and one that comes after the lease but before the temporary
// key's expiry spares the target freeing it in place.
type Copy struct {
	// Src and Dst dial the key's source and its target.
	Src, Dst Dialer
	Key      []byte
	// Chunk is the most elements a piece reads, Bytes the most bytes;
	// defaults 1000 and 256 KiB. Within them a piece is sized from the
	// time the last one took to read and to write, so that one holds
	// either server for about Slice (default 1 ms): it halves when a
	// piece took longer, and grows by a quarter when one took under
	// half, never under 16 by time; and it keeps to Bytes by what the
	// elements read weigh, down to one. The first piece is one element.
	Chunk, Bytes int
	Slice        time.Duration
	// Lease is how long the lock holds without a piece renewing it.
	// Default 3 s.
	Lease time.Duration
	// Timeout bounds each command. Default 5 s.
	Timeout time.Duration
	// Holding is told true once this copy holds the lock: until
	// DelSource, the source's copy is the key, whole, and no one else
	// deletes it. It is told false when the copy gives the lock up.
	Holding func(bool)
	// DelSource deletes the source's copy, once the target's is whole:
	// the caller's, so that it follows its reads of the key from the
	// source. Default: UNLINK on the copy's own connection.
	DelSource func(ctx context.Context) error
}

// The names a copy uses on the target beside the key: reserved, so the
// mover never moves them and a client should not use them.
const (
	// ReservedPrefix starts every name a copy uses on a server.
	ReservedPrefix = "kolco:bigkey:"
	tempPrefix     = ReservedPrefix + "tmp:"
	lockPrefix     = ReservedPrefix + "lock:"
)

// Reserved reports whether key is a name a copy uses.
func Reserved(key []byte) bool { return strings.HasPrefix(string(key), ReservedPrefix) }

// errLostLock is a copy's when its lease ran out and the lock went to
// another: it starts again.
var errLostLock = errors.New("mover: the copy's lock on the target went to another")

// pollEvery is how often a copy waiting for another's lock looks again.
const pollEvery = 10 * time.Millisecond

// Run moves the key, waiting while another holds its lock, and reports
// whether it was on the source (false: another moved it, or it expired).
// It fails with ctx's error, or the first error of a server.
func (c *Copy) Run(ctx context.Context) (moved bool, err error) {
	c.defaults()
	src, err := c.dial(ctx, c.Src)
	if err != nil {
		return false, err
	}
	defer src.Close()
	dst, err := c.dial(ctx, c.Dst)
	if err != nil {
		return false, err
	}
	defer dst.Close()
	cc := &copyConns{c: c, src: src, dst: dst, lock: lockPrefix + string(c.Key), temp: tempPrefix + string(c.Key)}
	for {
		if on, err := cc.onSource(); err != nil || !on {
			return false, err
		}
		token, err := cc.take()
		if err != nil {
			return false, err
		}
		if token == "" {
			if !sleep(ctx, pollEvery) {
				return false, ctx.Err()
			}
			continue
		}
		c.Holding(true)
		moved, err := cc.copy(ctx, token)
		c.Holding(false)
		cc.release(token)
		if !errors.Is(err, errLostLock) {
			return moved, err
		}
	}
}

func (c *Copy) defaults() {
	if c.Chunk <= 0 {
		c.Chunk = 1000
	}
	if c.Slice <= 0 {
		c.Slice = time.Millisecond
	}
	if c.Bytes <= 0 {
		c.Bytes = 256 << 10
	}
	if c.Lease <= 0 {
		c.Lease = 3 * time.Second
	}
	if c.Timeout <= 0 {
		c.Timeout = 5 * time.Second
	}
	if c.Holding == nil {
		c.Holding = func(bool) {}
	}
}

func (c *Copy) dial(ctx context.Context, d Dialer) (*resp.Conn, error) {
	conn, err := d(ctx)
	if err != nil {
		return nil, err
	}
	return resp.NewConn(conn), nil
}

// copyConns is a copy's connections and names.
type copyConns struct {
	c          *Copy
	src, dst   *resp.Conn
	lock, temp string
}

func (cc *copyConns) do(conn *resp.Conn, args ...string) (resp.Value, error) {
	if err := conn.SetDeadline(time.Now().Add(cc.c.Timeout)); err != nil {
		return resp.Value{}, err
	}
	v, err := conn.Do(args...)
	var re resp.Error
	if errors.As(err, &re) {
		err = &ServerError{Command: args[0], Reply: string(re)}
	}
	return v, err
}

func (cc *copyConns) onSource() (bool, error) {
	v, err := cc.do(cc.src, "EXISTS", string(cc.c.Key))
	return v.Int == 1, err
}

// take takes the lock, with a token of its own; "" when another holds it.
func (cc *copyConns) take() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	token := hex.EncodeToString(b[:])
	v, err := cc.do(cc.dst, "SET", cc.lock, token, "NX", "PX", ms(cc.c.Lease))
	if err != nil || v.Nil {
		return "", err
	}
	return token, nil
}

// release gives the lock up, and with it the temporary key of a copy
// that did not finish: UNLINK frees it apart from the target's event
// loop, where its expiry would free it in place (see finishScript).
func (cc *copyConns) release(token string) {
	_, _ = cc.do(cc.dst, "EVAL", releaseScript, "2", cc.lock, cc.temp, token)
}

// copy copies the key holding the lock as token.
func (cc *copyConns) copy(ctx context.Context, token string) (bool, error) {
	key := string(cc.c.Key)
	// Under the lock: whoever held it before deleted the source's copy
	// before giving it up, if it got that far.
	if on, err := cc.onSource(); err != nil || !on {
		return false, err
	}
	typ, err := cc.do(cc.src, "TYPE", key)
	if err != nil {
		return false, err
	}
	at, err := cc.expiry()
	if err != nil {
		return false, err
	}
	if _, err := cc.do(cc.dst, "UNLINK", cc.temp); err != nil { // a copy's left before
		return false, err
	}
	w := &pieceWriter{cc: cc, token: token}
	defer w.wait() // before the connection is used again, or closed
	var meta []string
	switch typ.Str {
	case "hash", "set", "zset":
		err = cc.scanned(ctx, w, typ.Str)
	case "list":
		err = cc.list(ctx, w)
	case "stream":
		meta, err = cc.stream(ctx, w)
	case "string":
		err = cc.str(ctx, w)
	case "none":
		return false, nil // expired since
	default:
		return false, fmt.Errorf("mover: a key of type %s cannot be copied in pieces", typ.Str)
	}
	if err == nil {
		err = w.wait()
	}
	if err != nil {
		return false, err
	}
	args := append([]string{"EVAL", finishScript, "3", cc.lock, cc.temp, key, token, ms(cc.c.Lease), strconv.FormatInt(at, 10)}, meta...)
	v, err := cc.do(cc.dst, args...)
	if err != nil {
		return false, err
	}
	if v.Int != 1 {
		return false, errLostLock
	}
	if cc.c.DelSource != nil {
		return true, cc.c.DelSource(ctx)
	}
	_, err = cc.do(cc.src, "UNLINK", key)
	return true, err
}

// expiry returns the key's expiry, Unix ms, or -1: PEXPIRETIME, or, on a
// server before 7.0, now and PTTL.
func (cc *copyConns) expiry() (int64, error) {
	v, err := cc.do(cc.src, "PEXPIRETIME", string(cc.c.Key))
	if err == nil {
		return v.Int, nil
	}
	if v, err = cc.do(cc.src, "PTTL", string(cc.c.Key)); err != nil || v.Int < 0 {
		return v.Int, err
	}
	return time.Now().UnixMilli() + v.Int, nil
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// The scripts on the target. KEYS[1] is the lock, KEYS[2] the temporary
// key; ARGV[1] the copy's token, ARGV[2] the lease (ms). The temporary
// key expires twice the lease after the last piece, so that one left by
// a copy that did not finish goes by itself.
const (
	pieceScript = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local i = 4
while i <= #ARGV do
  local n = tonumber(ARGV[i])
  redis.call(ARGV[3], KEYS[2], unpack(ARGV, i+1, i+n))
  i = i + n + 1
end
redis.call('PEXPIRE', KEYS[2], 2*tonumber(ARGV[2]))
return 1
`
	// finishScript makes the temporary key KEYS[3], the key, with the
	// expiry ARGV[3] (Unix ms; -1: none; one past deletes it, as the
	// source's copy would have gone), after XSETID ARGV[4...] for a
	// stream. No temporary key: the source's copy expired before a
	// piece was read, and so does any the target held. A key the target
	// held (a copy that renamed and died before it deleted the source's)
	// goes with UNLINK, freed apart from the server's main thread, and
	// so does every big key a copy deletes: DEL frees it in place (a
	// hash of 100,000 fields of 1 KB: DEL 407 ms, UNLINK 0.5 ms; a
	// sorted set of a million members, on a machine at load 20: DEL
	// 9.1 s, UNLINK 8.8 ms). So does an expiry: PEXPIREAT of a time
	// gone deletes the key in place (lazyfree-lazy-expire is off by
	// default) - that hash, its time run out mid-copy, 142-667 ms where
	// UNLINK took 1-9 ms - so the script unlinks a copy whose time ran out.
	finishScript = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('UNLINK', KEYS[3])
if redis.call('EXISTS', KEYS[2]) == 0 then return 1 end
local at, now = tonumber(ARGV[3]), redis.call('TIME')
if at > 0 and at <= tonumber(now[1])*1000 + math.floor(tonumber(now[2])/1000) then
  redis.call('UNLINK', KEYS[2])
  return 1
end
if #ARGV > 3 then redis.call('XSETID', KEYS[2], unpack(ARGV, 4)) end
redis.call('RENAME', KEYS[2], KEYS[3])
if tonumber(ARGV[3]) > 0 then redis.call('PEXPIREAT', KEYS[3], ARGV[3]) else redis.call('PERSIST', KEYS[3]) end
return 1
`
	releaseScript = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('UNLINK', KEYS[2])
  redis.call('DEL', KEYS[1])
end
return 1
`
)
