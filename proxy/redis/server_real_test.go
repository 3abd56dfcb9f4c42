package redis

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"
)

// sentinel ends every differential case: a request whose reply marks the
// end of the server's replies when the connection stays open.
const (
	sentinel      = "*2\r\n$4\r\nECHO\r\n$11\r\nend-of-case\r\n"
	sentinelReply = "$11\r\nend-of-case\r\n"
)

// serverCases are request streams, each followed by the sentinel, that
// redis-server and the Reader must answer alike: the same reply bytes, and
// the connection closed after the same reply. The requests are stateless
// (PING, ECHO, errors), so that the model may forward them on a connection
// of its own.
var serverCases = []struct{ name, in string }{
	// Well-formed requests.
	{"array", "*1\r\n$4\r\nPING\r\n"},
	{"inline", "PING\r\n"},
	{"inline with LF only", "PING\n"},
	{"inline padded", "  PING  \r\n"},
	{"blank lines skipped", "\r\n\n\nPING\r\n"},
	{"empty arrays skipped", "*0\r\n*-1\r\nPING\r\n"},
	{"empty argument", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n"},
	{"binary argument", "*2\r\n$4\r\nECHO\r\n$5\r\na\r\n\x00b\r\n"},
	{"pipelined", "PING\r\n*2\r\n$4\r\nECHO\r\n$1\r\nx\r\nECHO y\r\n"},
	// What redis-server lets pass: it looks for '\r' alone and skips the
	// byte after it, and skips the two bytes after a bulk string unread.
	{"any byte after CR", "*1\rX$4\r\nPING\r\n"},
	{"any byte after CR in bulk length", "*1\r\n$4\rXPING\r\n"},
	{"any two bytes after bulk", "*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n"},
	{"LFs after bulk", "*1\r\n$4\r\nPING\n\n"},
	// Bad array lengths: the server replies and closes.
	{"count ends at LF", "*1\n$4\r\nPING\r\n"},
	{"count not a number", "*x\r\n"},
	{"count empty", "*\r\n"},
	{"count with plus", "*+1\r\n$4\r\nPING\r\n"},
	{"count with leading zero", "*01\r\n$4\r\nPING\r\n"},
	{"count with space before", "* 1\r\n$4\r\nPING\r\n"},
	{"count with space after", "*1 \r\n$4\r\nPING\r\n"},
	{"count minus zero", "*-0\r\n"},
	{"count over 2^31-1", "*2147483648\r\n"},
	// Bad bulk strings.
	{"colon instead of dollar", "*1\r\n:4\r\nPING\r\n"},
	{"empty line instead of bulk", "*1\r\n\r\n"},
	{"LF instead of bulk", "*1\r\n\n\r\n"},
	{"letter instead of bulk", "*1\r\nx\r\n"},
	{"array swallows the sentinel", "*2\r\n$4\r\nPING\r\n"},
	{"bulk length minus one", "*1\r\n$-1\r\n"},
	{"bulk length not a number", "*1\r\n$x\r\n"},
	{"bulk length empty", "*1\r\n$\r\n"},
	{"bulk length leading zero", "*1\r\n$04\r\nPING\r\n"},
	{"bulk length with plus", "*1\r\n$+4\r\nPING\r\n"},
	{"bulk length over proto-max-bulk-len", "*1\r\n$536870913\r\n"},
	// Inline commands: quotes and escapes as sdssplitargs reads them.
	{"double quotes", "ECHO \"a b\"\r\n"},
	{"single quotes", "ECHO 'a b'\r\n"},
	{"hex and newline escapes", "ECHO \"a\\x41\\n\\r\\t\\b\\a\"\r\n"},
	{"escaped quote", "ECHO \"\\\"\"\r\n"},
	{"escaped other letter", "ECHO \"\\q\"\r\n"},
	{"bad hex escape", "ECHO \"\\x4g\"\r\n"},
	{"single quote escape", "ECHO 'a\\'b'\r\n"},
	{"empty quotes", "ECHO \"\"\r\n"},
	{"quote inside a word", "ECHO a\"b c\"\r\n"},
	{"tab separates", "ECHO a\tb\r\n"},
	{"vertical tab inside a word", "ECHO a\vb\r\n"},
	{"vertical tab leading", "\vECHO a\r\n"},
	{"vertical tab after quote", "ECHO \"a\"\v\r\n"},
	{"CR inside a line", "PING\rPING\r\n"},
	{"unterminated double quote", "ECHO \"ab\r\n"},
	{"unterminated single quote", "ECHO 'ab\r\n"},
	{"closing quote then letter", "ECHO \"ab\"c\r\n"},
	{"backslash at the end", "ECHO \"a\\\r\n"},
	{"unbalanced quote in a word", "ECHO a\"b\r\n"},
	// Lines too long and NUL bytes, which the server never gets past.
	{"inline too long", strings.Repeat("a", 200000) + "\r\n"},
	{"count line too long", "*" + strings.Repeat("1", 200000) + "\r\n"},
	{"NUL in inline", "PING\x00" + strings.Repeat("a", 100000)},
	{"NUL in count line", "*1\x00" + strings.Repeat("a", 100000)},
	{"NUL in bulk length", "*1\r\n$\x00" + strings.Repeat("a", 100000)},
	// Unknown commands, their names and arguments cut as the server cuts
	// them.
	{"unknown", "foo\r\n"},
	{"unknown with args", "foo bar baz\r\n"},
	{"unknown empty name", "*1\r\n$0\r\n\r\n"},
	{"unknown long arg", "foo " + strings.Repeat("a", 200) + "\r\n"},
	{"unknown long args", "foo " + strings.Repeat("a", 100) + " " + strings.Repeat("b", 100) + " c\r\n"},
	{"unknown long name", strings.Repeat("f", 200) + "\r\n"},
	{"unknown with CR LF NUL", "*3\r\n$3\r\nfoo\r\n$5\r\na\r\nb\x00\r\n$2\r\nzz\r\n"},
	{"unknown NUL in name", "*2\r\n$3\r\nf\x00o\r\n$1\r\nz\r\n"},
	{"HTTP POST", "POST / HTTP/1.1\r\n"},
	{"HTTP Host", "Host: example.com\r\n"},
	{"HTTP host array", "*2\r\n$5\r\nhost:\r\n$1\r\nx\r\n"},
	// Arity.
	{"get without key", "GET\r\n"},
	{"get two keys", "get a b\r\n"},
	{"set without value", "set a\r\n"},
	{"echo without arg", "ECHO\r\n"},
	{"mset odd", "MSET a 1 b\r\n"},
	{"msetnx odd", "MSETNX a 1 b\r\n"},
	{"container alone", "xgroup\r\n"},
	{"unknown subcommand", "xgroup foo\r\n"},
	{"unknown subcommand lower", "Object foo\r\n"},
	{"unknown subcommand CR LF", "*2\r\n$6\r\nxgroup\r\n$5\r\nh\r\nlp\r\n"},
	{"unknown subcommand long", "object foo" + strings.Repeat("x", 200) + "\r\n"},
	{"subcommand arity", "xgroup create a\r\n"},
	// numkeys.
	{"eval more keys than args", "EVAL x 2 a\r\n"},
	{"eval negative keys", "EVAL x -1 a\r\n"},
	{"eval keys not a number", "EVAL x y a\r\n"},
	{"eval keys with plus", "EVAL x +1 a\r\n"},
	{"eval keys leading zero", "EVAL x 01 a\r\n"},
	{"eval keys minus zero", "EVAL x -0 a\r\n"},
	{"eval keys overflow", "EVAL x 99999999999999999999 a\r\n"},
	{"eval_ro more keys", "EVAL_RO x 2 a\r\n"},
	{"zunionstore zero keys", "ZUNIONSTORE d 0 a\r\n"},
	{"zunionstore negative keys", "ZUNIONSTORE d -1 a\r\n"},
	{"zunionstore more keys", "ZUNIONSTORE d 3 a\r\n"},
	{"zunionstore huge keys", "ZUNIONSTORE d 99999999999 a\r\n"},
	{"zunionstore keys not a number", "ZUNIONSTORE d x a\r\n"},
	{"zdiffstore zero keys", "ZDIFFSTORE d 0 a\r\n"},
	{"zunion zero keys", "ZUNION 0 a\r\n"},
	{"zunion keys not a number", "ZUNION x a\r\n"},
	{"zdiff more keys", "ZDIFF 2 a\r\n"},
	{"zinter more keys", "ZINTER 2 a\r\n"},
	{"zinterstore more keys", "ZINTERSTORE d 2 a\r\n"},
	{"zintercard zero keys", "ZINTERCARD 0 a\r\n"},
	{"zintercard more keys", "ZINTERCARD 3 a\r\n"},
	{"zintercard keys not a number", "ZINTERCARD x a\r\n"},
	{"sintercard zero keys", "SINTERCARD 0 a\r\n"},
	{"sintercard more keys", "SINTERCARD 3 a\r\n"},
	{"sintercard keys not a number", "SINTERCARD x a\r\n"},
	{"sintercard negative keys", "SINTERCARD -1 a\r\n"},
	{"lmpop zero keys", "LMPOP 0 a LEFT\r\n"},
	{"lmpop more keys", "LMPOP 3 a LEFT\r\n"},
	{"lmpop keys not a number", "LMPOP x a LEFT\r\n"},
	{"zmpop zero keys", "ZMPOP 0 a MIN\r\n"},
	{"zmpop keys not a number", "ZMPOP x a MIN\r\n"},
}

// TestRequestsLikeServer feeds each case to redis-server and to a Reader,
// and checks that they answer with the same bytes and close the connection
// alike. The Reader's requests that parse are forwarded to the server on a
// connection of their own, as a proxy forwards them, and its errors
// answered with their Reply.
func TestRequestsLikeServer(t *testing.T) {
	srv := startServer(t)
	fwd := srv.dial(t)
	for _, tc := range serverCases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in + sentinel
			want, wantClosed := serverReplies(t, srv, in)
			got, gotClosed := readerReplies(t, fwd, in)
			if got != want || gotClosed != wantClosed {
				t.Errorf("input %q:\n reader %q (closed %v)\n server %q (closed %v)",
					trim(tc.in), trim(got), gotClosed, trim(want), wantClosed)
			}
		})
	}
}

// serverReplies sends in to a new connection and reads the replies until
// the sentinel's, or until the server closes the connection.
func serverReplies(t *testing.T, srv *server, in string) (string, bool) {
	c := srv.dial(t)
	if _, err := c.c.Write([]byte(in)); err != nil {
		t.Fatal(err)
	}
	var got []byte
	buf := make([]byte, 64<<10)
	for !bytes.HasSuffix(got, []byte(sentinelReply)) {
		n, err := c.c.Read(buf)
		got = append(got, buf[:n]...)
		// The server closes with unread input pending (a line too long):
		// the kernel then resets the connection after the reply.
		if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
			return string(got), true
		}
		if err != nil {
			t.Fatalf("reading the server's replies to %q (got %q so far): %v", trim(in), trim(string(got)), err)
		}
	}
	return string(got), false
}

// readerReplies reads in with a Reader and returns what a proxy would
// send back, and whether it would close the connection.
func readerReplies(t *testing.T, fwd *conn, in string) (string, bool) {
	r := NewReader(strings.NewReader(in), Limits{})
	var out []byte
	var req Request
	for {
		err := r.Read(&req)
		var e *Error
		switch {
		case errors.Is(err, io.EOF):
			return string(out), false
		case errors.As(err, &e):
			out = append(out, e.Reply...)
			if e.Close {
				return string(out), true
			}
		case err != nil:
			t.Fatalf("%q: %v", trim(in), err)
		default:
			out = append(out, fwd.send(AppendRequest(nil, &req)).Data...)
		}
	}
}

// trim shortens long inputs and replies in messages.
func trim(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
