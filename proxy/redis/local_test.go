package redis

import (
	"io"
	"testing"
)

// TestLocalLikeServer answers PING, ECHO, SELECT and QUIT locally and
// compares with redis-server started with one database, as the proxy
// serves: the same bytes, and QUIT closes both.
func TestLocalLikeServer(t *testing.T) {
	srv := startServer(t, "--databases", "1")
	for _, line := range []string{
		"PING", "PING hello", `PING ""`, "PING a b", "ECHO x", `ECHO ""`,
		"SELECT 0", "SELECT 1", "SELECT -1", "SELECT x", "SELECT 01", "SELECT 99999999999", "QUIT", "QUIT now",
	} {
		t.Run(line, func(t *testing.T) {
			req := mustRead(t, line)
			got, closing := AppendLocal(nil, req)
			c := srv.dial(t)
			want := c.send(AppendRequest(nil, req)).Data
			if string(got) != string(want) {
				t.Errorf("local %q, server %q", got, want)
			}
			if closing {
				// The server must close too: the next read ends the stream.
				if _, _, err := c.rr.Read(nil, nil); err != io.EOF {
					t.Errorf("the proxy closes, the server did not: %v", err)
				}
				return
			}
			// The server must not close: the connection still answers.
			if got := c.do("PING").Data; string(got) != "+PONG\r\n" {
				t.Errorf("the server closed, the proxy does not: %q", got)
			}
		})
	}
}

// TestAuthLikeServer answers AUTH locally and compares with redis-server,
// with a password and without.
func TestAuthLikeServer(t *testing.T) {
	for _, password := range []string{"sekret", ""} {
		var srv *server
		if password != "" {
			srv = startServer(t, "--requirepass", password)
		} else {
			srv = startServer(t)
		}
		for _, line := range []string{
			"AUTH x", "AUTH sekret", "AUTH default sekret", "AUTH default x", "AUTH bob sekret", "AUTH a b c",
		} {
			t.Run(password+"/"+line, func(t *testing.T) {
				req := mustRead(t, line)
				got, ok := AppendAuth(nil, req, password)
				want := srv.dial(t).send(AppendRequest(nil, req)).Data
				if string(got) != string(want) {
					t.Errorf("local %q, server %q", got, want)
				}
				if ok != (string(want) == "+OK\r\n") {
					t.Errorf("authenticated %v after %q", ok, want)
				}
			})
		}
		t.Run(password+"/NOAUTH", func(t *testing.T) {
			if password == "" {
				t.Skip("no password, no NOAUTH")
			}
			if got := srv.dial(t).do("GET", "k").Data; string(got) != NoAuth {
				t.Errorf("server %q, NoAuth %q", got, NoAuth)
			}
		})
	}
}

// TestHelloAnswersAsOldServer: HELLO gets what a server without HELLO
// (Redis 5) answers, an unknown command error with its arguments.
func TestHelloAnswersAsOldServer(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"HELLO 3", "-ERR unknown command 'HELLO', with args beginning with: '3' \r\n"},
		{"hello", "-ERR unknown command 'hello', with args beginning with: \r\n"},
		{"HELLO 3 AUTH default pw", "-ERR unknown command 'HELLO', with args beginning with: '3' 'AUTH' 'default' 'pw' \r\n"},
	} {
		got, closing := AppendLocal(nil, mustRead(t, tc.line))
		if string(got) != tc.want || closing {
			t.Errorf("%s: %q (close %v), want %q", tc.line, got, closing, tc.want)
		}
	}
}
