package mover

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/resp"
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

// digest returns what a key holds, in an order that does not depend on
// its encoding, hashed, with its type and expiry.
func digest(t *testing.T, addr, key string) string {
	t.Helper()
	c, err := resp.Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	do := func(args ...string) resp.Value {
		v, err := c.Do(args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return v
	}
	typ := do("TYPE", key).Str
	var items []string
	flat := func(v resp.Value) []string {
		s, _ := v.Strings()
		return s
	}
	pairs := func(s []string) []string {
		var out []string
		for i := 0; i+1 < len(s); i += 2 {
			out = append(out, s[i]+"="+s[i+1])
		}
		slices.Sort(out)
		return out
	}
	switch typ {
	case "hash":
		items = pairs(flat(do("HGETALL", key)))
	case "set":
		items = flat(do("SMEMBERS", key))
		slices.Sort(items)
	case "zset":
		items = flat(do("ZRANGE", key, "0", "-1", "WITHSCORES"))
	case "list":
		items = flat(do("LRANGE", key, "0", "-1"))
	case "stream":
		for _, e := range do("XRANGE", key, "-", "+").Elems {
			items = append(items, e.Elems[0].Str+":"+strings.Join(flat(e.Elems[1]), ","))
		}
		v := do("XINFO", "STREAM", key)
		for i := 0; i+1 < len(v.Elems); i += 2 {
			if k := v.Elems[i].Str; k == "last-generated-id" || k == "max-deleted-entry-id" || k == "entries-added" {
				items = append(items, fmt.Sprint(k, v.Elems[i+1].Str, v.Elems[i+1].Int))
			}
		}
	case "string":
		items = []string{do("GET", key).Str}
	}
	h := sha256.Sum256([]byte(strings.Join(items, "\x00")))
	return fmt.Sprintf("%s %d items %x expires %d", typ, len(items), h[:8], do("PEXPIRETIME", key).Int)
}

// TestRunCopiesBigKeysInPieces: beside 300 small keys, a key of each type
// over the bounds moves piece by piece, and reads back whole on the
// target - the same content, the same expiry (the stream its last ID and
// counts too) - and nothing of it, nor of the copy, is left on the source
// or beside it on the target.
func TestRunCopiesBigKeysInPieces(t *testing.T) {
	src, dst := startRedis(t), startRedis(t)
	s, d := dial(t, src), dial(t, dst)
	s.pipeline(300, func(i int) []string { return []string{"SET", fmt.Sprintf("k%d", i), "v"} })
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
	if s.dbsize() != 0 || d.dbsize() != 300+len(keys) {
		t.Errorf("source %d keys, target %d: want 0 and %d (%s)", s.dbsize(), d.dbsize(), 300+len(keys), d.do("KEYS", ReservedPrefix+"*"))
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
