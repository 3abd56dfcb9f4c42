package proxy

import (
	"bytes"
	"net"
	"os"
	"syscall"
	"testing"
)

// TestHandoverMessage: a handed-over connection's message carries the
// name of its listening socket, what the client sent unread, and the
// connection's state when it has one; without one, the name is the
// message's whole key, as before states were carried, so that an older
// process reads it the same. A state past the message's bound is not
// sent: the connection is closed as a drain closes it.
func TestHandoverMessage(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ends [2]*net.UnixConn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "handover")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		ends[i] = c.(*net.UnixConn)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dialed, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer dialed.Close()
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	h := &clientHandover{conn: ends[0]}
	for _, tc := range []struct {
		name  string
		state []byte
	}{{"a new connection's state", nil}, {"a state", []byte(`{"proto":3,"authed":true}`)}} {
		t.Run(tc.name, func(t *testing.T) {
			if !h.send(&client{conn: conn, listenKey: "tcp:127.0.0.1:6379", connState: tc.state}, []byte("PING\r\n")) {
				t.Fatal("not sent")
			}
			f, key, state, unread, err := receiveHandover(ends[1])
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			if key != "tcp:127.0.0.1:6379" || !bytes.Equal(state, tc.state) || string(unread) != "PING\r\n" {
				t.Errorf("received %q, state %q, unread %q", key, state, unread)
			}
		})
	}
	if h.send(&client{conn: conn, listenKey: "k", connState: bytes.Repeat([]byte("x"), maxHandoverKey)}, nil) {
		t.Error("a state past the message's bound was sent")
	}
}
