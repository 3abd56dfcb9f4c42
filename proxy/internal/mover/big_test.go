package mover

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/storecheck"
)

// bigKeys fills s with one key of each type the copy knows, over the
// bounds bigBounds sets, half of them with a time to live, and returns
// their names.
func bigKeys(t *testing.T, s *conn, n int) []string {
	t.Helper()
	s.pipeline(n, func(i int) []string {
		return []string{"HSET", "big:hash", "f" + strconv.Itoa(i), strings.Repeat("h", i%50)}
	})
	s.pipeline(n, func(i int) []string { return []string{"SADD", "big:set", "m" + strconv.Itoa(i)} })
	s.pipeline(n, func(i int) []string {
		return []string{"ZADD", "big:zset", strconv.FormatFloat(float64(i)/7, 'g', -1, 64), "m" + strconv.Itoa(i)}
	})
	s.pipeline(n, func(i int) []string { return []string{"RPUSH", "big:list", "e" + strconv.Itoa(i)} })
	s.pipeline(n, func(i int) []string { return []string{"XADD", "big:stream", "*", "f", strconv.Itoa(i)} })
	s.pipeline(1, func(int) []string { return []string{"XDEL", "big:stream", "0-1"} })
	s.pipeline(1, func(int) []string { return []string{"SET", "big:string", strings.Repeat("s", 30000)} })
	keys := []string{"big:hash", "big:set", "big:zset", "big:list", "big:stream", "big:string"}
	for i, k := range keys {
		if i%2 == 0 {
			s.do("PEXPIREAT", k, strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli()+int64(i), 10))
		}
	}
	return keys
}

// digest returns what a key holds, whatever its encoding.
func digest(t *testing.T, addr, key string) string {
	t.Helper()
	d, err := storecheck.Digest(context.Background(), addr, key)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRunCopiesBigKeysInPieces: beside 300 small keys and a hash whose
// size is over what a big key may have but under the bounds (it moves
// with MIGRATE), a key of each type over the bounds moves piece by piece, and reads back whole on the
// target - the same content, the same expiry (the stream its last ID and
// counts too) - and nothing of it, nor of the copy, is left on the source
// or beside it on the target; the keys MIGRATE moved are reported to the
// plan, the big ones not.
func TestRunCopiesBigKeysInPieces(t *testing.T) {
	src, dst := startRedis(t), startRedis(t)
	s, d := dial(t, src), dial(t, dst)
	s.pipeline(300, func(i int) []string { return []string{"SET", fmt.Sprintf("k%d", i), "v"} })
	// Over the size a big key may have, under the bounds: one MIGRATE.
	s.pipeline(50, func(i int) []string { return []string{"HSET", "mid:hash", strconv.Itoa(i), strings.Repeat("m", 100)} })
	keys := bigKeys(t, s, 2000)
	want := map[string]string{}
	for _, k := range keys {
		want[k] = digest(t, src, k)
	}
	p := &plan{dest: func([]byte) string { return dst }, src: src, chunk: 97}
	if err := Run(context.Background(), dialer(src), p, Config{BigElements: 100, BigBytes: 20000}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(p.big)
	if sorted := slices.Sorted(slices.Values(keys)); !slices.Equal(p.big, sorted) {
		t.Errorf("copied in pieces: %v, want %v", p.big, sorted)
	}
	for _, k := range keys {
		if got := digest(t, dst, k); got != want[k] {
			t.Errorf("%s on the target: %s, want %s", k, got, want[k])
		}
	}
	// The keys MIGRATE took off the source are reported, the big ones
	// not: they are still there until their copies end.
	if len(p.gone) != 301 || slices.ContainsFunc(p.gone, func(k string) bool { return slices.Contains(keys, k) }) {
		t.Errorf("reported moved by MIGRATE: %d keys, want the 301 small ones (big ones among them: %v)", len(p.gone),
			slices.DeleteFunc(slices.Clone(p.gone), func(k string) bool { return !slices.Contains(keys, k) }))
	}
	if s.dbsize() != 0 || d.dbsize() != 301+len(keys) {
		t.Errorf("source %d keys, target %d: want 0 and %d (%s)", s.dbsize(), d.dbsize(), 301+len(keys), d.do("KEYS", ReservedPrefix+"*"))
	}
}

// TestCopyAfterACrash: a copy that died mid-way left on the target a
// temporary key with part of the key and its lock, held for the rest of
// its lease: the next copy waits for the lease to run out, throws the
// part away and copies the key whole.
func TestCopyAfterACrash(t *testing.T) {
	src, dst := startRedis(t), startRedis(t)
	s, d := dial(t, src), dial(t, dst)
	s.pipeline(5000, func(i int) []string { return []string{"HSET", "h", strconv.Itoa(i), "v"} })
	want := digest(t, src, "h")
	d.do("HSET", tempPrefix+"h", "stale", "x")
	d.do("SET", lockPrefix+"h", "dead", "PX", "300")
	start := time.Now()
	moved, err := (&Copy{Src: dialer(src), Dst: dialer(dst), Key: []byte("h"), Chunk: 500}).Run(context.Background())
	if err != nil || !moved {
		t.Fatalf("Run: %v, %v", moved, err)
	}
	if waited := time.Since(start); waited < 250*time.Millisecond {
		t.Errorf("the copy took %v: it did not wait for the dead copy's lease", waited)
	}
	if got := digest(t, dst, "h"); got != want {
		t.Errorf("on the target: %s, want %s", got, want)
	}
	if s.dbsize() != 0 || d.dbsize() != 1 {
		t.Errorf("source %d keys, target %d: want 0 and 1", s.dbsize(), d.dbsize())
	}
}

// TestCopyThatLosesItsLock: a copy whose lock goes to another mid-way (its
// lease ran out while it was paused) writes nothing more and renames
// nothing; it starts again once the other's lock is gone, and the key is
// whole on the target, once.
func TestCopyThatLosesItsLock(t *testing.T) {
	src, dst := startRedis(t), startRedis(t)
	s, d := dial(t, src), dial(t, dst)
	s.pipeline(5000, func(i int) []string { return []string{"SADD", "s", strconv.Itoa(i)} })
	want := digest(t, src, "s")
	other := dial(t, dst)
	holds := 0
	c := &Copy{Src: dialer(src), Dst: dialer(dst), Key: []byte("s"), Chunk: 500, Holding: func(h bool) {
		if h {
			if holds++; holds == 1 {
				other.do("SET", lockPrefix+"s", "other", "PX", "200")
			}
		}
	}}
	moved, err := c.Run(context.Background())
	if err != nil || !moved {
		t.Fatalf("Run: %v, %v", moved, err)
	}
	if holds < 2 {
		t.Errorf("the copy held the lock %d times: it did not start again", holds)
	}
	if got := digest(t, dst, "s"); got != want {
		t.Errorf("on the target: %s, want %s", got, want)
	}
	if s.dbsize() != 0 || d.dbsize() != 1 {
		t.Errorf("source %d keys, target %d: want 0 and 1", s.dbsize(), d.dbsize())
	}
}

// hookedDialer is dialer(addr) whose connections call hook with each
// command before it is sent; an error from hook fails the write, as a
// broken connection would.
func hookedDialer(addr string, hook func(cmd []byte) error) Dialer {
	return func(ctx context.Context) (net.Conn, error) {
		c, err := dialer(addr)(ctx)
		return &hookedConn{Conn: c, hook: hook}, err
	}
}

type hookedConn struct {
	net.Conn
	hook func(cmd []byte) error
}

func (c *hookedConn) Write(b []byte) (int, error) {
	if err := c.hook(b); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}

// onHSCAN returns a hook that calls f at the nth HSCAN a copy sends,
// once n-1 pieces are on their way to the target.
func onHSCAN(nth int, f func() error) func([]byte) error {
	n := 0
	return func(cmd []byte) error {
		if bytes.Contains(cmd, []byte("HSCAN")) {
			if n++; n == nth {
				return f()
			}
		}
		return nil
	}
}

// lazyFreed returns how many keys the server at addr freed apart from
// its event loop, or is freeing (INFO memory).
func lazyFreed(c *conn) int {
	n := 0
	for _, line := range strings.Split(c.do("INFO", "memory"), "\r\n") {
		for _, f := range []string{"lazyfree_pending_objects:", "lazyfreed_objects:"} {
			if v, ok := strings.CutPrefix(line, f); ok {
				i, _ := strconv.Atoi(v)
				n += i
			}
		}
	}
	return n
}

// TestCopyWhoseTimeRanOut: a key whose time to live runs out mid-copy is
// gone on the target, as on the source - and the part copied is freed
// apart from the target's event loop (UNLINK), not in place as a
// PEXPIREAT of a time gone frees it: 142-667 ms for a hash of 100 MB.
func TestCopyWhoseTimeRanOut(t *testing.T) {
	src, dst := startRedis(t), startRedis(t)
	s, d := dial(t, src), dial(t, dst)
	s.pipeline(50_000, func(i int) []string { return []string{"HSET", "h", strconv.Itoa(i), "v"} })
	at := time.Now().Add(time.Second)
	s.do("PEXPIREAT", "h", strconv.FormatInt(at.UnixMilli(), 10))
	// The 40th piece is read once the key's time ran out: the source
	// has it no more, and the copy ends with 39 pieces on the target, one
	// field then 16 to 500 each: over 512 fields, a hash in a table, which
	// UNLINK frees apart (a listpack it frees in place, at once).
	hook := onHSCAN(40, func() error {
		time.Sleep(time.Until(at) + 10*time.Millisecond)
		return nil
	})
	before := lazyFreed(d)
	moved, err := (&Copy{Src: hookedDialer(src, hook), Dst: dialer(dst), Key: []byte("h"), Chunk: 500}).Run(context.Background())
	if err != nil || !moved {
		t.Fatalf("Run: %v, %v", moved, err)
	}
	if got := d.do("EXISTS", "h", tempPrefix+"h", lockPrefix+"h"); got != ":0" {
		t.Errorf("on the target, of the key, its temporary key and its lock: %q, want none", got)
	}
	if freed := lazyFreed(d) - before; freed != 1 {
		t.Errorf("the target freed %d keys apart from its event loop, want 1: the part copied", freed)
	}
}

// TestCopyThatFails: a copy that fails mid-way leaves the source's copy
// whole and on the target neither its lock nor its temporary key, which
// its expiry would have freed in place, holding the target (see
// TestCopyWhoseTimeRanOut).
func TestCopyThatFails(t *testing.T) {
	src, dst := startRedis(t), startRedis(t)
	s, d := dial(t, src), dial(t, dst)
	s.pipeline(5000, func(i int) []string { return []string{"HSET", "h", strconv.Itoa(i), "v"} })
	want := digest(t, src, "h")
	broken := errors.New("the source's connection broke")
	hook := onHSCAN(3, func() error { return broken })
	_, err := (&Copy{Src: hookedDialer(src, hook), Dst: dialer(dst), Key: []byte("h"), Chunk: 500}).Run(context.Background())
	if !errors.Is(err, broken) {
		t.Fatalf("Run: %v, want %v", err, broken)
	}
	if got := d.do("EXISTS", "h", tempPrefix+"h", lockPrefix+"h"); got != ":0" {
		t.Errorf("on the target, of the key, its temporary key and its lock: %q, want none (%s)", got, d.do("KEYS", "*"))
	}
	if got := digest(t, src, "h"); got != want {
		t.Errorf("on the source: %s, want %s", got, want)
	}
}

// TestCopyPiecesKeepToTheirBytes: a key of large elements is copied in
// pieces of about Bytes from the first - what the elements weigh bounds
// a piece, a hash's by its fields and values, a stream's by its
// entries - where a first piece of 100 elements of 10 KB sent 1 MB.
func TestCopyPiecesKeepToTheirBytes(t *testing.T) {
	const bound = 16 << 10
	for _, tc := range []struct {
		key  string
		fill func(i int) []string
	}{
		{"hash", func(i int) []string { return []string{"HSET", "hash", strconv.Itoa(i), strings.Repeat("h", 1000)} }},
		{"stream", func(i int) []string { return []string{"XADD", "stream", "*", "f", strings.Repeat("x", 10_000)} }},
	} {
		t.Run(tc.key, func(t *testing.T) {
			src, dst := startRedis(t), startRedis(t)
			s := dial(t, src)
			s.pipeline(600, tc.fill)
			want := digest(t, src, tc.key)
			// A command goes out in writes of 4 KB (bufio), the first
			// starting with its array's '*', which the elements here
			// hold none of.
			sent, largest := 0, 0
			hook := func(b []byte) error {
				if b[0] == '*' {
					sent = 0
				}
				sent += len(b)
				largest = max(largest, sent)
				return nil
			}
			c := &Copy{Src: dialer(src), Dst: hookedDialer(dst, hook), Key: []byte(tc.key), Bytes: bound}
			if moved, err := c.Run(context.Background()); err != nil || !moved {
				t.Fatalf("Run: %v, %v", moved, err)
			}
			if got := digest(t, dst, tc.key); got != want {
				t.Errorf("on the target: %s, want %s", got, want)
			}
			// SCAN's COUNT is a hint: a piece may hold an element or a
			// bucket more than asked.
			if largest > 2*bound {
				t.Errorf("the largest command sent %d bytes, over twice the bound, %d", largest, bound)
			}
		})
	}
}

// TestMigrateSizesEveryElement: a hash of fewer fields than the bound of
// elements, of one field of 2 MB among 998 of a byte, is over the bound
// of bytes: the script that sizes a key before its MIGRATE answers it
// big, where MEMORY USAGE of five fields sampled took it for under 1 MiB
// and MIGRATE sent its 2 MB whole.
func TestMigrateSizesEveryElement(t *testing.T) {
	src, dst := startRedis(t), startRedis(t)
	s := dial(t, src)
	s.pipeline(998, func(i int) []string { return []string{"HSET", "h", strconv.Itoa(i), "v"} })
	s.do("HSET", "h", "large", strings.Repeat("l", 2<<20))
	host, port, _ := net.SplitHostPort(dst)
	migrate := [][]byte{[]byte("MIGRATE"), []byte(host), []byte(port), []byte(""), []byte("0"), []byte("5000")}
	if _, err := s.c.Write(AppendMigrate(nil, migrate, [][]byte{[]byte("h")}, 1000, 1<<20)); err != nil {
		t.Fatal(err)
	}
	reply, _, err := s.rr.Read(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	moved, big, err := ParseMigrate(reply, 1)
	if err != nil || moved != 0 || len(big) != 1 || string(big[0]) != "h" {
		t.Errorf("ParseMigrate: %d moved, big %q, %v; want none moved, h big", moved, big, err)
	}
}

// TestRunSizesEveryElementOfAKeyItLists: a hash of 200 fields, one of
// them 2 MB, among small keys, is over the bound of bytes and moves piece
// by piece. The listing asks the size of each moving key before it goes:
// MEMORY USAGE of five fields sampled measured 10,152 bytes, under the
// 16,000 over which a key goes to the script that sizes it exactly, and
// MIGRATE sent its 2.6 MB whole.
func TestRunSizesEveryElementOfAKeyItLists(t *testing.T) {
	src, dst := startRedis(t), startRedis(t)
	s := dial(t, src)
	s.pipeline(300, func(i int) []string { return []string{"SET", fmt.Sprintf("k%d", i), "v"} })
	s.pipeline(199, func(i int) []string { return []string{"HSET", "h", "f" + strconv.Itoa(i), "v" + strconv.Itoa(i)} })
	s.do("HSET", "h", "large", strings.Repeat("l", 2<<20))
	want := digest(t, src, "h")
	p := &plan{dest: func([]byte) string { return dst }, src: src}
	if err := Run(context.Background(), dialer(src), p, Config{BigElements: 1000, BigBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.big, []string{"h"}) {
		t.Errorf("copied in pieces: %q, want [h]", p.big)
	}
	if got := digest(t, dst, "h"); got != want {
		t.Errorf("on the target: %s, want %s", got, want)
	}
}
