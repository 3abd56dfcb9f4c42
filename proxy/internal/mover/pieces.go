package mover

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"
)

// The pieces of a big key's copy (see Copy): read from the source by the
// key's type, written into the temporary key on the target.

// scanned copies a hash, set or sorted set with its SCAN.
func (cc *copyConns) scanned(ctx context.Context, w *pieceWriter, typ string) error {
	cmds := map[string][2]string{"hash": {"HSCAN", "HSET"}, "set": {"SSCAN", "SADD"}, "zset": {"ZSCAN", "ZADD"}}[typ]
	scan, add := cmds[0], cmds[1]
	cursor, count := "0", min(firstPiece, cc.c.Chunk)
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		start := time.Now()
		v, err := cc.do(cc.src, scan, string(cc.c.Key), cursor, "COUNT", strconv.Itoa(count))
		took := time.Since(start)
		if err != nil {
			return err
		}
		if len(v.Elems) != 2 {
			return fmt.Errorf("%w: %s's reply", ErrBadPiece, scan)
		}
		items, ok := v.Elems[1].Strings()
		if !ok {
			return fmt.Errorf("%w: %s's reply", ErrBadPiece, scan)
		}
		if typ == "zset" { // member, score -> score, member
			for i := 0; i+1 < len(items); i += 2 {
				items[i], items[i+1] = items[i+1], items[i]
			}
		}
		if len(items) > 0 {
			if err := w.write(add, [][]string{items}); err != nil {
				return err
			}
		}
		n := len(items)
		if typ != "set" { // field, value; score, member
			n /= 2
		}
		count = cc.c.pace(count, n, size(items), max(took, time.Duration(w.took.Load())))
		if cursor = v.Elems[0].Str; cursor == "0" {
			return nil
		}
	}
}

// list copies a list with LRANGE, from its head.
func (cc *copyConns) list(ctx context.Context, w *pieceWriter) error {
	start, count := 0, min(firstPiece, cc.c.Chunk)
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		began := time.Now()
		v, err := cc.do(cc.src, "LRANGE", string(cc.c.Key), strconv.Itoa(start), strconv.Itoa(start+count-1))
		took := time.Since(began)
		if err != nil {
			return err
		}
		items, ok := v.Strings()
		if !ok {
			return fmt.Errorf("%w: LRANGE's reply", ErrBadPiece)
		}
		if len(items) > 0 {
			if err := w.write("RPUSH", [][]string{items}); err != nil {
				return err
			}
		}
		if len(items) < count {
			return nil
		}
		start += len(items)
		count = cc.c.pace(count, len(items), size(items), max(took, time.Duration(w.took.Load())))
	}
}

// firstPiece is how many elements a copy's first piece reads, before
// it knows what an element weighs: one, so that a key of large elements
// does not begin with a piece far over Bytes (100 elements of 10 KB were
// a first piece of 1 MB). The next piece is sized by the first.
const firstPiece = 1

// pace returns how many elements the next piece reads, after one of n
// elements and size bytes, count asked, that took took to read or the
// piece before it to write (see Chunk): by time, 16 to Chunk; by bytes,
// as few as one element.
func (c *Copy) pace(count, n, size int, took time.Duration) int {
	switch {
	case took > c.Slice:
		count /= 2
	case took < c.Slice/2:
		count += count/4 + 1
	}
	count = min(max(count, 16), c.Chunk)
	if n > 0 && size > 0 {
		count = min(count, max(c.Bytes*n/size, 1))
	}
	return count
}

// size is how many bytes items hold.
func size(items []string) int {
	n := 0
	for _, it := range items {
		n += len(it)
	}
	return n
}

// stream copies a stream's entries with XRANGE, and returns the XSETID
// arguments that give the copy the stream's last ID and counts.
func (cc *copyConns) stream(ctx context.Context, w *pieceWriter) ([]string, error) {
	from, count := "-", min(firstPiece, cc.c.Chunk)
	for {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		start := time.Now()
		v, err := cc.do(cc.src, "XRANGE", string(cc.c.Key), from, "+", "COUNT", strconv.Itoa(count))
		took := time.Since(start)
		if err != nil {
			return nil, err
		}
		var calls [][]string
		bytes := 0
		for _, e := range v.Elems {
			if len(e.Elems) != 2 {
				return nil, fmt.Errorf("%w: XRANGE's reply", ErrBadPiece)
			}
			fields, ok := e.Elems[1].Strings()
			if !ok {
				return nil, fmt.Errorf("%w: XRANGE's reply", ErrBadPiece)
			}
			calls = append(calls, append([]string{e.Elems[0].Str}, fields...))
			bytes += len(e.Elems[0].Str) + size(fields)
			from = "(" + e.Elems[0].Str
		}
		if len(calls) > 0 {
			if err := w.write("XADD", calls); err != nil {
				return nil, err
			}
		}
		if len(calls) < count {
			break
		}
		count = cc.c.pace(count, len(calls), bytes, max(took, time.Duration(w.took.Load())))
	}
	v, err := cc.do(cc.src, "XINFO", "STREAM", string(cc.c.Key))
	if err != nil {
		return nil, err
	}
	info := map[string]string{}
	for i := 0; i+1 < len(v.Elems); i += 2 {
		info[v.Elems[i].Str] = v.Elems[i+1].Str
		if v.Elems[i+1].Kind == ':' {
			info[v.Elems[i].Str] = strconv.FormatInt(v.Elems[i+1].Int, 10)
		}
	}
	return []string{info["last-generated-id"], "ENTRIESADDED", info["entries-added"], "MAXDELETEDID", info["max-deleted-entry-id"]}, nil
}

// str copies a string with GETRANGE.
func (cc *copyConns) str(ctx context.Context, w *pieceWriter) error {
	for start := 0; ; start += cc.c.Bytes {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		v, err := cc.do(cc.src, "GETRANGE", string(cc.c.Key), strconv.Itoa(start), strconv.Itoa(start+cc.c.Bytes-1))
		if err != nil {
			return err
		}
		if v.Str != "" {
			if err := w.write("APPEND", [][]string{{v.Str}}); err != nil {
				return err
			}
		}
		if len(v.Str) < cc.c.Bytes {
			return nil
		}
	}
}

// ErrBadPiece is a copy's error for a reply it cannot read.
var ErrBadPiece = errors.New("mover: an unexpected reply while copying a big key")

// pieceWriter writes pieces into the temporary key, each a script that
// checks the lock is still the copy's and renews it. One piece is in
// flight while the next is read: the source's reads and the target's
// writes overlap, and the pieces arrive in order.
type pieceWriter struct {
	cc       *copyConns
	token    string
	inflight bool
	result   chan error
	// took is how long the last piece written took, in ns.
	took atomic.Int64
}

// write calls cmd on the temporary key once for each of calls, its
// arguments, in one script, once the piece before is written; it
// returns that piece's error.
func (w *pieceWriter) write(cmd string, calls [][]string) error {
	if err := w.wait(); err != nil {
		return err
	}
	args := []string{"EVAL", pieceScript, "2", w.cc.lock, w.cc.temp, w.token, ms(w.cc.c.Lease), cmd}
	for _, c := range calls {
		args = append(append(args, strconv.Itoa(len(c))), c...)
	}
	if w.result == nil {
		w.result = make(chan error, 1)
	}
	w.inflight = true
	go func() {
		start := time.Now()
		v, err := w.cc.do(w.cc.dst, args...)
		w.took.Store(int64(time.Since(start)))
		if err == nil && v.Int != 1 {
			err = errLostLock
		}
		w.result <- err
	}()
	return nil
}

// wait waits for the piece in flight, and returns its error.
func (w *pieceWriter) wait() error {
	if !w.inflight {
		return nil
	}
	w.inflight = false
	return <-w.result
}
