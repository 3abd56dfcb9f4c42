package faults

import (
	"bufio"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// echoServer starts a server on 127.0.0.1 that writes back each line it
// reads; Cleanup stops it.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func newTestRelay(t *testing.T) *Relay {
	t.Helper()
	r, err := NewRelay(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// roundTrip writes line on c and reads it back.
func roundTrip(c net.Conn, br *bufio.Reader, line string) (string, error) {
	if _, err := c.Write([]byte(line + "\n")); err != nil {
		return "", err
	}
	got, err := br.ReadString('\n')
	return got[:max(len(got)-1, 0)], err
}

// TestRelayStallHoldsBytesInOrder: a stalled link delivers nothing while
// stalled, and everything sent meanwhile, in order, once healed.
func TestRelayStallHoldsBytesInOrder(t *testing.T) {
	r := newTestRelay(t)
	c, err := net.Dial("tcp", r.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	if got, err := roundTrip(c, br, "before"); err != nil || got != "before" {
		t.Fatalf("before the stall: %q, %v", got, err)
	}
	r.Stall()
	for _, l := range []string{"one", "two", "three"} {
		if _, err := c.Write([]byte(l + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := br.ReadByte(); !isTimeout(err) {
		t.Fatalf("a stalled link delivered: %v", err)
	}
	_ = c.SetReadDeadline(time.Time{})
	r.Heal()
	for _, want := range []string{"one", "two", "three"} {
		got, err := br.ReadString('\n')
		if err != nil || got != want+"\n" {
			t.Fatalf("after the stall: %q, %v; want %q", got, err, want)
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestRelayCutResets: a cut link resets its connections and each new
// one until healed; then connections work again.
func TestRelayCutResets(t *testing.T) {
	r := newTestRelay(t)
	c, err := net.Dial("tcp", r.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	if _, err := roundTrip(c, br, "x"); err != nil {
		t.Fatal(err)
	}
	r.Cut()
	if _, err := br.ReadString('\n'); err == nil {
		t.Fatal("a connection over a cut link still reads")
	}
	// A new connection is reset: as its connect completes, or after.
	if c2, err := net.Dial("tcp", r.Addr); err == nil {
		defer c2.Close()
		if _, err := roundTrip(c2, bufio.NewReader(c2), "y"); err == nil {
			t.Fatal("a new connection over a cut link works")
		}
	}
	r.Heal()
	c3, err := net.Dial("tcp", r.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if got, err := roundTrip(c3, bufio.NewReader(c3), "z"); err != nil || got != "z" {
		t.Fatalf("after healing: %q, %v", got, err)
	}
}

// TestRelaySlowDelays: a slow link delays each chunk, each way, by its
// delay at least.
func TestRelaySlowDelays(t *testing.T) {
	r := newTestRelay(t)
	c, err := net.Dial("tcp", r.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	r.Slow(100 * time.Millisecond)
	start := time.Now()
	if got, err := roundTrip(c, br, "slow"); err != nil || got != "slow" {
		t.Fatalf("%q, %v", got, err)
	}
	// Two chunks, there and back: 200 ms at least, however busy the
	// machine (a lower bound, which no load can break).
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("a round trip over a link slowed by 100 ms a chunk took %v", d)
	}
}

// TestRelayPassesTheServersClose: a server that closes its connection is
// seen to close it through the relay.
func TestRelayPassesTheServersClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			_, _ = c.Write([]byte("bye\n"))
			c.Close()
		}
	}()
	r, err := NewRelay(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, err := net.Dial("tcp", r.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b, err := io.ReadAll(c)
	if string(b) != "bye\n" || err != nil {
		t.Errorf("read %q, %v; want the server's line and its close", b, err)
	}
}
