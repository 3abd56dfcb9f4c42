package proxy

import (
	"net"
	"testing"
	"time"
)

// TestSessionQueueStaysSmall: under steady load the queue of ops in
// flight never empties, and must not grow with the number of requests.
func TestSessionQueueStaysSmall(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	s := &session{conn: a}
	deadline := time.Now().Add(time.Hour)
	for range 3 {
		if !s.enqueue(&op{deadline: deadline}) {
			t.Fatal("enqueue refused on a live session")
		}
	}
	for range 100_000 {
		if !s.enqueue(&op{deadline: deadline}) {
			t.Fatal("enqueue refused on a live session")
		}
		s.answered()
	}
	if n := len(s.queue) - s.head; n != 3 {
		t.Fatalf("%d ops queued, want 3", n)
	}
	if c := cap(s.queue); c > 256 {
		t.Errorf("queue capacity %d after 100000 requests with 3-4 in flight", c)
	}
}

// TestSessionStopRefusesOps: once the reader has stopped, enqueue takes
// nothing, so no op waits for a reply that no reader will read.
func TestSessionStopRefusesOps(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	s := &session{conn: a}
	first := &op{deadline: time.Now().Add(time.Hour)}
	if !s.enqueue(first) {
		t.Fatal("enqueue refused on a live session")
	}
	if rest := s.stop(); len(rest) != 1 || rest[0] != first {
		t.Fatalf("stop returned %v, want the queued op", rest)
	}
	if s.enqueue(&op{}) {
		t.Fatal("enqueue took an op after stop")
	}
}

// TestSessionOverdue: a session is overdue once its first request, or its
// write under way, is past its deadline, which the watchdog then closes.
func TestSessionOverdue(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	s := &session{conn: a}
	now := time.Now()
	if s.overdue(now) {
		t.Error("an idle session is overdue")
	}
	s.enqueue(&op{deadline: now.Add(time.Second)})
	s.enqueue(&op{deadline: now.Add(-time.Second)}) // the first one decides
	if s.overdue(now) || !s.overdue(now.Add(2*time.Second)) {
		t.Error("overdue does not follow the first request's deadline")
	}
	s.answered()
	s.answered()
	s.writeDeadline = now.Add(-time.Millisecond)
	if !s.overdue(now) {
		t.Error("a write past its deadline is not overdue")
	}
}
