package proxy

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"
)

// TestGarbageLinesClose: a client that sends garbage lines - 10,000 of
// them in one write, memcached and Redis - is answered as the server
// would answer each (ERROR; -ERR unknown command) for maxErrorsInRow
// lines, and its connection is then closed, where it used to be answered
// line after line; a client whose errors are not in a row keeps its
// connection.
func TestGarbageLinesClose(t *testing.T) {
	m, r := startMemcached(t, 0), startRedis(t, 0)
	for _, tc := range []struct {
		proto, yaml, ok, okReply, errPrefix string
	}{
		{"memcached", poolYAML("", m), "version\r\n", "VERSION", "ERROR"},
		{"redis", redisPoolYAML("", r), "PING\r\n", "+PONG", "-ERR unknown command"},
	} {
		t.Run(tc.proto, func(t *testing.T) {
			s := startProxy(t, tc.yaml)
			addr := s.Addr("p").String()
			read := func(conn net.Conn) (lines []string) {
				_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // a guard; the test does not rely on it
				br := bufio.NewReader(conn)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return lines
					}
					lines = append(lines, line)
				}
			}
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			go func() { _, _ = conn.Write([]byte(strings.Repeat("xyzzy plugh\r\n", 10_000))) }()
			lines := read(conn)
			if len(lines) != maxErrorsInRow {
				t.Errorf("%d replies to 10,000 garbage lines before the connection closed, want %d", len(lines), maxErrorsInRow)
			}
			for _, l := range lines {
				if !strings.HasPrefix(l, tc.errPrefix) {
					t.Fatalf("a garbage line answered %q, want %s...", l, tc.errPrefix)
				}
			}

			// Errors that are not in a row: answered, and the connection kept.
			conn2, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn2.Close()
			batch := strings.Repeat(strings.Repeat("xyzzy\r\n", maxErrorsInRow-1)+tc.ok, 4)
			if _, err := conn2.Write([]byte(batch)); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(conn2)
			_ = conn2.SetReadDeadline(time.Now().Add(30 * time.Second))
			for i := range 4 * maxErrorsInRow {
				line, err := br.ReadString('\n')
				if err != nil {
					t.Fatalf("reply %d: %v: the connection closed though no %d errors came in a row", i, err, maxErrorsInRow)
				}
				if want := tc.errPrefix; i%maxErrorsInRow == maxErrorsInRow-1 {
					want = tc.okReply
					if !strings.HasPrefix(line, want) {
						t.Fatalf("reply %d: %q, want %s", i, line, want)
					}
				}
			}
		})
	}
}
