package proxy

import (
	"bufio"
	"io"
	"net"
	"testing"
)

// TestBroadcastPassesServerErrorLine: a server's own error line to a
// broadcast flush_all reaches the client as it is, not under a second
// SERVER_ERROR.
func TestBroadcastPassesServerErrorLine(t *testing.T) {
	t.Parallel()
	const line = "SERVER_ERROR out of memory\r\n"
	oom := fakeServer(t, func(c net.Conn) {
		r := bufio.NewReader(c)
		for {
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
			_, _ = io.WriteString(c, line)
		}
	})
	m := startMemcached(t, 0)
	s := startProxy(t, "p:\n  listen: 127.0.0.1:0\n  flush_all: broadcast\n  timeout: 10000\n  servers:\n   - "+m.addr+":1\n   - "+oom+":1\n")
	if got := dial(t, s.Addr("p").String()).do("flush_all\r\n"); got != line {
		t.Fatalf("flush_all with one server out of memory: %q, want %q", got, line)
	}
}
