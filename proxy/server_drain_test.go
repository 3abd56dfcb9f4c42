package proxy

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// serverSide returns the server's end of the test client's connection.
// The caller holds s.mu.
func serverSide(s *Server, c *mc) net.Conn {
	for conn := range s.listening.clients {
		if conn.RemoteAddr().String() == c.conn.LocalAddr().String() {
			return conn
		}
	}
	return nil
}

// TestShutdownDrains: a shutdown closes each client at the first moment it
// is idle and answers every request a client sent: an idle client is
// closed at once; a client halfway through a request, and one that
// connected but has not sent its first request, get their answers.
func TestShutdownDrains(t *testing.T) {
	s := startProxy(t, poolYAML("", startMemcached(t, 0)))
	addr := s.Addr("p").String()
	idle, half, fresh := dial(t, addr), dial(t, addr), dial(t, addr)
	if got := idle.do("set k 0 0 1\r\nx\r\n"); got != "STORED\r\n" {
		t.Fatalf("set: %q", got)
	}
	// The first request on the connection, so that a reader in a request
	// is in this one.
	half.send("set k 0 0 5\r\nhel") // the rest after the shutdown began
	eventually(t, "three clients, one reading a request", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		c := s.listening.clients[serverSide(s, half)]
		return len(s.listening.clients) == 3 && c != nil && c.drains.inRequest.Load()
	})
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		done <- s.Shutdown(ctx)
	}()
	// The idle client is closed without a request of its own.
	if n, err := idle.r.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("idle client: read %d bytes, %v; want EOF", n, err)
	}
	half.send("lo\r\n")
	if got := half.reply(memcache.CmdSet); got != "STORED\r\n" {
		t.Errorf("the request under way at the shutdown: %q", got)
	}
	if got := fresh.do("get k\r\n"); got != "VALUE k 0 5\r\nhello\r\nEND\r\n" {
		t.Errorf("the first request of a client connected before the shutdown: %q", got)
	}
	for _, c := range []*mc{half, fresh} {
		if _, err := c.r.ReadByte(); err != io.EOF {
			t.Errorf("a drained client left open: %v", err)
		}
	}
	if err := <-done; err != nil {
		t.Errorf("shutdown: %v", err)
	}
}
