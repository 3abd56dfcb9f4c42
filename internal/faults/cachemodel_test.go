package faults

import (
	"strings"
	"testing"
	"time"
)

// ms is a time of a history, in milliseconds.
func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func set(client int, value string, call, ret int, acked bool) CacheOp {
	return CacheOp{Client: client, Kind: Set, Key: "k", Value: value, Acked: acked, Call: ms(call), Return: ms(ret)}
}

func del(client int, call, ret int, acked bool) CacheOp {
	return CacheOp{Client: client, Kind: Delete, Key: "k", Acked: acked, Call: ms(call), Return: ms(ret)}
}

func get(client int, value string, call, ret int) CacheOp {
	return CacheOp{Client: client, Kind: Get, Key: "k", Value: value, Found: value != "", Call: ms(call), Return: ms(ret)}
}

func TestCacheModel(t *testing.T) {
	for _, c := range []struct {
		name    string
		lag     int
		history []CacheOp
		why     Broken // the violation; 0 for a history that must pass
	}{
		{"a read of the last acknowledged value", 0, []CacheOp{
			set(0, "a", 0, 10, true), set(0, "b", 20, 30, true), get(1, "b", 40, 50)}, 0},
		{"a miss after any write", 0, []CacheOp{
			set(0, "a", 0, 10, true), get(1, "", 20, 30)}, 0},
		{"an older value read by a read that overlaps the newer write", 0, []CacheOp{
			set(0, "a", 0, 10, true), set(0, "b", 20, 40, true), get(1, "a", 30, 50)}, 0},
		{"the older of two overlapping writes, read after both", 0, []CacheOp{
			set(0, "a", 0, 20, true), set(1, "b", 10, 30, true), get(2, "a", 40, 50)}, 0},
		{"a timed-out write's value read long after newer writes", 0, []CacheOp{
			set(0, "a", 0, 1000, false), set(1, "b", 2000, 2010, true), get(2, "a", 3000, 3010)}, 0},
		{"a value read after a delete that failed", 0, []CacheOp{
			set(0, "a", 0, 10, true), del(1, 20, 30, false), get(2, "a", 40, 50)}, 0},
		{"a value read after the delete overlapping it", 0, []CacheOp{
			set(0, "a", 0, 10, true), del(1, 20, 40, true), get(2, "a", 30, 50)}, 0},
		{"a replica's read within the lag", 100, []CacheOp{
			set(0, "a", 0, 10, true), set(0, "b", 20, 30, true), get(1, "a", 80, 90)}, 0},

		{"a stale read", 0, []CacheOp{
			set(0, "a", 0, 10, true), set(0, "b", 20, 30, true), get(1, "a", 40, 50)},
			Stale},
		{"a stale read by the writer itself", 0, []CacheOp{
			set(0, "a", 0, 10, true), set(0, "b", 20, 30, true), get(0, "a", 40, 50)},
			Stale},
		{"a deleted value read again", 0, []CacheOp{
			set(0, "a", 0, 10, true), del(1, 20, 30, true), get(2, "a", 40, 50)},
			Stale},
		{"a value no set wrote", 0, []CacheOp{
			set(0, "a", 0, 10, true), get(1, "z", 20, 30)},
			NoSuchSet},
		{"a value read before its set was sent", 0, []CacheOp{
			get(1, "a", 0, 10), set(0, "a", 20, 30, true)},
			BeforeSet},
		{"a replica's read past the lag", 100, []CacheOp{
			set(0, "a", 0, 10, true), set(0, "b", 20, 30, true), get(1, "a", 200, 210)},
			Stale},
		{"a replica's read older than its own connection's write", 100, []CacheOp{
			set(0, "a", 0, 10, true), set(1, "b", 20, 30, true), get(1, "a", 40, 50)},
			StaleOwn},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := CacheModel{Lag: ms(c.lag)}.Check(c.history)
			switch {
			case c.why == 0 && len(got) > 0:
				t.Errorf("violations of a history that keeps the promise:\n%v", got)
			case c.why != 0 && len(got) != 1:
				t.Errorf("got %d violations, want 1: %v", len(got), got)
			case c.why != 0 && got[0].Why != c.why:
				t.Errorf("violation %v, want %v", got[0].Why, c.why)
			}
		})
	}
}

// TestCacheModelKeysApart checks that keys are checked each on its own: a
// newer value of another key makes no read stale.
func TestCacheModelKeysApart(t *testing.T) {
	h := []CacheOp{set(0, "a", 0, 10, true), set(0, "b", 20, 30, true), get(1, "a", 40, 50)}
	h[1].Key = "other"
	if got := (CacheModel{}).Check(h); len(got) > 0 {
		t.Errorf("violations across keys: %v", got)
	}
}

// TestViolationSaysWhich checks that a violation names the read, the set
// it read and the newer write.
func TestViolationSaysWhich(t *testing.T) {
	got := CacheModel{}.Check([]CacheOp{set(0, "a", 0, 10, true), set(3, "b", 20, 30, true), get(1, "a", 40, 50)})
	if len(got) != 1 {
		t.Fatalf("got %v", got)
	}
	s := got[0].String()
	for _, want := range []string{"client 1 (conn 0) get k -> a", "written by client 0 (conn 0) set k a", "older than client 3 (conn 0) set k b"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q lacks %q", s, want)
		}
	}
}
