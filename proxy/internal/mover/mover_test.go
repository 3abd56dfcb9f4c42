package mover

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// half sends the keys whose CRC is odd to dst.
func half(dst string) func(key []byte) string {
	return func(key []byte) string {
		if crc32.ChecksumIEEE(key)%2 == 1 {
			return dst
		}
		return ""
	}
}

// TestRunMovesTheKeysItIsTold: of 5,000 keys, a third with a time to
// live, those Dest sends elsewhere are on the target afterwards, TTL kept,
// and only those: the rest stay on the source; every key was listed, and
// the moved ones counted, with their bytes estimated from a sample.
func TestRunMovesTheKeysItIsTold(t *testing.T) {
	src, dst := startRedis(t), startRedis(t)
	s, d := dial(t, src), dial(t, dst)
	const n = 5000
	s.pipeline(n, func(i int) []string {
		if i%3 == 0 {
			return []string{"SET", fmt.Sprintf("k%d", i), strings.Repeat("v", 100), "EX", "1000"}
		}
		return []string{"SET", fmt.Sprintf("k%d", i), strings.Repeat("v", 100)}
	})
	p := &plan{dest: half(dst)}
	if err := Run(context.Background(), dialer(src), p, Config{}); err != nil {
		t.Fatal(err)
	}
	moving := 0
	for i := range n {
		k := fmt.Sprintf("k%d", i)
		on, off := d, s
		if half(dst)([]byte(k)) == "" {
			on, off = s, d
		} else {
			moving++
		}
		if got := on.do("EXISTS", k); got != ":1" {
			t.Fatalf("%s: EXISTS %s on its server", k, got)
		}
		if got := off.do("EXISTS", k); got != ":0" {
			t.Fatalf("%s: EXISTS %s on the other", k, got)
		}
		if ttl := on.do("TTL", k); (i%3 == 0) != (ttl != ":-1") {
			t.Fatalf("%s: TTL %s", k, ttl)
		}
	}
	if p.scanned < n || p.moved[dst] != moving || len(p.failed) != 0 {
		t.Errorf("scanned %d (want at least %d), moved %d (want %d), failed %v", p.scanned, n, p.moved[dst], moving, p.failed)
	}
	if per := p.bytes / int64(moving); per < 100 || per > 1000 {
		t.Errorf("%d bytes a key estimated for keys of 100-byte values", per)
	}
}

// TestRunRetriesAFailedMigrate: while the target cannot be reached, each
// MIGRATE fails, is reported and tried again, and the keys stay on the
// source; once it can, they move.
func TestRunRetriesAFailedMigrate(t *testing.T) {
	src, dst := startRedis(t), startRedis(t)
	s, d := dial(t, src), dial(t, dst)
	s.pipeline(100, func(i int) []string { return []string{"SET", fmt.Sprintf("k%d", i), "v"} })
	closed := startRedis(t) // a server stopped below: nothing listens there
	dial(t, closed).c.Write([]byte("*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n"))
	p := &plan{dest: func([]byte) string { return dst }, addr: map[string]string{dst: closed}, timeout: 200}
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), dialer(src), p, Config{Backoff: 10 * time.Millisecond}) }()
	for {
		p.mu.Lock()
		failed := len(p.failed)
		p.mu.Unlock()
		if failed >= 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := s.dbsize(); got != 100 {
		t.Fatalf("the source holds %d keys while MIGRATE fails, want 100", got)
	}
	p.mu.Lock()
	delete(p.addr, dst)
	p.mu.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s.dbsize() != 0 || d.dbsize() != 100 {
		t.Errorf("source %d keys, target %d: want 0 and 100", s.dbsize(), d.dbsize())
	}
	var se *ServerError
	if !errors.As(p.failed[0], &se) || se.Command != "MIGRATE" {
		t.Errorf("the failure reported: %v, want a MIGRATE's error reply", p.failed[0])
	}
}

// TestRunStopsWhenThePlanSays: an error of Wait ends Run with
// ErrStopped, and the keys not moved stay on the source.
func TestRunStopsWhenThePlanSays(t *testing.T) {
	src, dst := startRedis(t), startRedis(t)
	s := dial(t, src)
	s.pipeline(1000, func(i int) []string { return []string{"SET", fmt.Sprintf("k%d", i), "v"} })
	stop := errors.New("replaced")
	p := &plan{dest: func([]byte) string { return dst }, wait: func() error { return stop }}
	if err := Run(context.Background(), dialer(src), p, Config{}); !errors.Is(err, ErrStopped) || !errors.Is(err, stop) {
		t.Fatalf("Run: %v, want ErrStopped and the plan's error", err)
	}
	if got := s.dbsize(); got != 1000 {
		t.Errorf("the source holds %d keys, want 1000", got)
	}
}

// TestRunEndsWithAClosedWindow: with only worker 0 admitted, every key
// moves all the same, and Run returns: the workers left out end with the
// listing.
func TestRunEndsWithAClosedWindow(t *testing.T) {
	src, dst := startRedis(t), startRedis(t)
	s, d := dial(t, src), dial(t, dst)
	s.pipeline(3000, func(i int) []string { return []string{"SET", fmt.Sprintf("k%d", i), "v"} })
	p := &plan{dest: func([]byte) string { return dst }, admits: func(w int) (bool, <-chan struct{}) { return w == 0, nil }}
	if err := Run(context.Background(), dialer(src), p, Config{}); err != nil {
		t.Fatal(err)
	}
	if s.dbsize() != 0 || d.dbsize() != 3000 {
		t.Errorf("source %d keys, target %d: want 0 and 3000", s.dbsize(), d.dbsize())
	}
}

// TestRunWakesHeldWorkersWhenTheWindowChanges: a worker the window holds
// back asks again when Admits' channel is closed, and not before - it
// looked every 10 ms, a hundred wake-ups a second for each worker held
// for as long as the window stayed shut - and then takes batches. Worker
// 0's first Wait holds the run until each held worker has asked once,
// and for 200 ms after, in which a worker that polled would ask again.
func TestRunWakesHeldWorkersWhenTheWindowChanges(t *testing.T) {
	src, dst := startRedis(t), startRedis(t)
	s, d := dial(t, src), dial(t, dst)
	s.pipeline(3000, func(i int) []string { return []string{"SET", fmt.Sprintf("k%d", i), "v"} })
	var (
		mu           sync.Mutex
		open         bool
		changed      = make(chan struct{})
		held         = map[int]int{} // each held worker's asks while shut
		after        = map[int]int{} // and since it opened
		asked        = make(chan int, 64)
		first, again = true, false
	)
	admits := func(w int) (bool, <-chan struct{}) {
		mu.Lock()
		defer mu.Unlock()
		if w == 0 {
			return true, nil
		}
		if open {
			after[w]++
			return true, nil
		}
		held[w]++
		select {
		case asked <- held[w]:
		default: // full: a worker that polls has shown itself already
		}
		return false, changed
	}
	wait := func() error {
		mu.Lock()
		once := first
		first = false
		mu.Unlock()
		if !once {
			return nil
		}
		for range 3 { // each held worker asks once: it has nothing else to do
			if n := <-asked; n > 1 {
				again = true
			}
		}
		select {
		case <-asked:
			again = true
		case <-time.After(200 * time.Millisecond):
		}
		mu.Lock()
		open = true
		close(changed)
		mu.Unlock()
		return nil
	}
	p := &plan{dest: func([]byte) string { return dst }, admits: admits, wait: wait}
	if err := Run(context.Background(), dialer(src), p, Config{MaxBatch: 10}); err != nil {
		t.Fatal(err)
	}
	if s.dbsize() != 0 || d.dbsize() != 3000 {
		t.Errorf("source %d keys, target %d: want 0 and 3000", s.dbsize(), d.dbsize())
	}
	if again {
		t.Error("a held worker asked Admits again before its channel was closed")
	}
	for w := 1; w < 4; w++ {
		if held[w] != 1 || after[w] == 0 {
			t.Errorf("worker %d asked %d times while held, %d once the window opened: want 1 and some", w, held[w], after[w])
		}
	}
}

// TestRunEndsWithItsContext: Run returns ctx's error once it ends.
func TestRunEndsWithItsContext(t *testing.T) {
	src, dst := startRedis(t), startRedis(t)
	dial(t, src).pipeline(1000, func(i int) []string { return []string{"SET", fmt.Sprintf("k%d", i), "v"} })
	ctx, cancel := context.WithCancel(context.Background())
	p := &plan{dest: func([]byte) string { return dst }, wait: func() error { cancel(); return nil }}
	if err := Run(ctx, dialer(src), p, Config{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
}

// TestRunListsABatchARoundTrip: when one key in five moves, a SCAN lists
// enough keys for a batch of moving ones, not a batch of keys: 20,000
// keys, batches of 100, in about 50 SCANs where a COUNT of the batch took
// 200.
func TestRunListsABatchARoundTrip(t *testing.T) {
	src, dst := startRedis(t), startRedis(t)
	s := dial(t, src)
	const n = 20_000
	s.pipeline(n, func(i int) []string { return []string{"SET", fmt.Sprintf("k%d", i), "v"} })
	s.do("CONFIG", "RESETSTAT")
	fifth := func(key []byte) string {
		if crc32.ChecksumIEEE(key)%5 == 0 {
			return dst
		}
		return ""
	}
	p := &plan{dest: fifth}
	if err := Run(context.Background(), dialer(src), p, Config{MaxBatch: 100}); err != nil {
		t.Fatal(err)
	}
	scans := -1
	for _, l := range strings.Split(s.do("INFO", "commandstats"), "\r\n") {
		if rest, ok := strings.CutPrefix(l, "cmdstat_scan:calls="); ok {
			scans, _ = strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
		}
	}
	t.Logf("listed %d keys in %d SCANs", p.scanned, scans)
	if p.scanned < n || scans < 0 || scans > 80 {
		t.Errorf("listed %d keys in %d SCANs; want %d in at most 80", p.scanned, scans, n)
	}
}
