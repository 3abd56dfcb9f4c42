package proxy

import (
	"fmt"
	"net"
	"runtime"
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
// write under way, is past its deadline and the server has moved nothing
// for it for a timeout - then the watchdog closes it. Bytes coming, or
// being taken, keep a large value's request alive past its deadline.
func TestSessionOverdue(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	s := &session{conn: a}
	const timeout = time.Second
	now := time.Now()
	at := func(d time.Duration) int64 { return now.Add(d).UnixNano() }
	if s.overdue(now, timeout) {
		t.Error("an idle session is overdue")
	}
	first := &op{deadline: now.Add(time.Second), sent: at(-time.Second)}
	s.enqueue(first)
	s.enqueue(&op{deadline: now.Add(-time.Second)}) // the first one decides
	if s.overdue(now, timeout) || !s.overdue(now.Add(2*time.Second), timeout) {
		t.Error("overdue does not follow the first request's deadline")
	}
	s.readAt.Store(at(1500 * time.Millisecond)) // its reply is coming
	if s.overdue(now.Add(2*time.Second), timeout) || !s.overdue(now.Add(3*time.Second), timeout) {
		t.Error("a reply that keeps coming does not keep its request alive for a timeout")
	}
	first.sent = 0 // not written whole yet: the write's progress counts
	s.readAt.Store(0)
	s.wroteAt.Store(at(2500 * time.Millisecond))
	if s.overdue(now.Add(3*time.Second), timeout) || !s.overdue(now.Add(4*time.Second), timeout) {
		t.Error("a request being written does not live while the server takes its bytes")
	}
	s.answered()
	s.answered()
	s.writeDeadline = now.Add(-time.Millisecond)
	s.wroteAt.Store(at(-500 * time.Millisecond))
	if s.overdue(now, timeout) || !s.overdue(now.Add(time.Second), timeout) {
		t.Error("a write past its deadline is overdue before the server stalled for a timeout, or not after")
	}
}

// TestUnreadReplyIsNoTimeout: a reply that has reached the proxy's socket
// and is not read yet (a proxy starved of CPU reads late) keeps its
// session from timing out; a server that sent nothing times out.
func TestUnreadReplyIsNoTimeout(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the socket's receive queue is asked on Linux")
	}
	for _, sent := range []bool{true, false} {
		t.Run(fmt.Sprint("reply sent ", sent), func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			conn, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			server, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer server.Close()
			const timeout = time.Second
			c := &serverConn{b: &backend{pool: &pool{cfg: &PoolConfig{Timeout: timeout}}}}
			s := &session{conn: conn}
			c.s = s
			now := time.Now()
			s.enqueue(&op{deadline: now.Add(-time.Second), sent: now.Add(-2 * time.Second).UnixNano()})
			if sent {
				if _, err := server.Write([]byte("+OK\r\n")); err != nil {
					t.Fatal(err)
				}
				for deadline := time.Now().Add(time.Minute); unread(conn) == 0; {
					if time.Now().After(deadline) {
						t.Fatal("the reply never reached the socket")
					}
					time.Sleep(time.Millisecond)
				}
			}
			c.timeOut(now)
			if s.dead.Load() == sent {
				t.Errorf("session closed: %v, with a reply waiting to be read: %v", s.dead.Load(), sent)
			}
		})
	}
}
