//go:build linux && !race && !msan && !asan

package proxy

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

func rawPair(t *testing.T) (*rawIO, net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); peer.Close() })
	x := newRawIO(conn)
	if x == nil {
		t.Fatal("no raw I/O for a TCP connection")
	}
	return x, conn, peer
}

// TestRawIO reads what the peer wrote, writes more than a socket buffer
// holds (so that the write waits for the peer to read), reports EOF,
// deadlines and a closed connection as net.Conn does, and allocates
// nothing per call.
func TestRawIO(t *testing.T) {
	x, conn, peer := rawPair(t)
	if _, err := peer.Write([]byte("get a\r\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := x.Read(buf)
	if err != nil || string(buf[:n]) != "get a\r\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}

	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(peer, int64(len(big))))
		got <- b
	}()
	if n, err := x.Write(big); err != nil || n != len(big) {
		t.Fatalf("wrote %d of %d: %v", n, len(big), err)
	}
	if b := <-got; !bytes.Equal(b, big) {
		t.Fatalf("peer read %d bytes, not what was written", len(b))
	}

	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	var ne net.Error
	if _, err := x.Read(buf); !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
	_ = conn.SetReadDeadline(time.Time{})

	xb, yb := []byte("x"), []byte("y")
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := peer.Write(xb); err != nil {
			t.Fatal(err)
		}
		if _, err := x.Read(buf); err != nil {
			t.Fatal(err)
		}
		if _, err := x.Write(yb); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(peer, buf[:1]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per read and write", allocs)
	}

	peer.Close()
	if _, err := x.Read(buf); err != io.EOF {
		t.Fatalf("read after the peer closed: %v, want EOF", err)
	}
	conn.Close()
	if _, err := x.Read(buf); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read after close: %v", err)
	}
	if _, err := x.Write([]byte("z")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after close: %v", err)
	}
}
