package mover

import (
	"context"
	"fmt"
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
