package redis

import (
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

// readOne reads the first request of in with lim.
func readOne(t *testing.T, in string, lim Limits) (*Request, error) {
	t.Helper()
	var req Request
	err := NewReader(strings.NewReader(in), lim).Read(&req)
	return &req, err
}

func TestReadRequests(t *testing.T) {
	tests := []struct {
		name, in string
		args     []string
		cmd      string
		keys     []string
		inline   bool
	}{
		{"get", "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", []string{"GET", "k"}, "get", []string{"k"}, false},
		{"inline set", "SET k v\r\n", []string{"SET", "k", "v"}, "set", []string{"k"}, true},
		{"mixed case", "gEt k\r\n", []string{"gEt", "k"}, "get", []string{"k"}, true},
		{"mget", "MGET a b c\r\n", []string{"MGET", "a", "b", "c"}, "mget", []string{"a", "b", "c"}, true},
		{"mset keys step two", "MSET a 1 b 2\r\n", []string{"MSET", "a", "1", "b", "2"}, "mset", []string{"a", "b"}, true},
		{"bitop keys from two", "BITOP AND d a b\r\n", []string{"BITOP", "AND", "d", "a", "b"}, "bitop", []string{"d", "a", "b"}, true},
		{"eval keys", "EVAL s 2 a b x\r\n", []string{"EVAL", "s", "2", "a", "b", "x"}, "eval", []string{"a", "b"}, true},
		{"eval no keys", "EVAL s 0\r\n", []string{"EVAL", "s", "0"}, "eval", nil, true},
		{"zunionstore", "ZUNIONSTORE d 2 a b WEIGHTS 1 2\r\n", nil, "zunionstore", []string{"d", "a", "b"}, true},
		{"zintercard", "ZINTERCARD 2 a b LIMIT 1\r\n", nil, "zintercard", []string{"a", "b"}, true},
		{"lmpop", "LMPOP 2 a b LEFT\r\n", nil, "lmpop", []string{"a", "b"}, true},
		{"sort store", "SORT a BY x GET y LIMIT 0 1 STORE d\r\n", nil, "sort", []string{"a", "d"}, true},
		{"sort get store", "SORT a GET store x\r\n", nil, "sort", []string{"a"}, true},
		{"sort_ro ignores store", "SORT_RO a STORE d\r\n", nil, "sort_ro", []string{"a"}, true},
		{"georadius store and storedist", "GEORADIUS k 0 0 1 m STORE d STOREDIST e\r\n", nil, "georadius", []string{"k", "d", "e"}, true},
		{"georadius store twice", "GEORADIUS k 0 0 1 m STORE d STORE e\r\n", nil, "georadius", []string{"k", "d", "e"}, true},
		{"subcommand key", "OBJECT ENCODING k\r\n", nil, "object|encoding", []string{"k"}, true},
		{"xgroup create", "XGROUP CREATE s g $\r\n", nil, "xgroup|create", []string{"s"}, true},
		{"no keys", "PING\r\n", []string{"PING"}, "ping", nil, true},
		{"refused keeps no keys", "MOVE a 1\r\n", nil, "move", nil, true},
		{"empty argument", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", []string{"ECHO", ""}, "echo", nil, false},
		{"binary argument", "*2\r\n$4\r\nECHO\r\n$4\r\n\r\n\x00\xff\r\n", []string{"ECHO", "\r\n\x00\xff"}, "echo", nil, false},
		{"quoted inline", `SET "a b" 'c\'d'` + "\r\n", []string{"SET", "a b", "c'd"}, "set", []string{"a b"}, true},
		{"empty requests skipped", "\r\n*0\r\n*-1\r\nPING\r\n", []string{"PING"}, "ping", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := readOne(t, tc.in, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.args != nil && !equalArgs(req.Args, tc.args) {
				t.Errorf("args %q, want %q", req.Args, tc.args)
			}
			if req.Cmd.Name() != tc.cmd || req.Inline != tc.inline {
				t.Errorf("command %q inline %v, want %q %v", req.Cmd.Name(), req.Inline, tc.cmd, tc.inline)
			}
			var keys []string
			for i := range req.NumKeys() {
				keys = append(keys, string(req.Key(i)))
				if string(req.Args[req.KeyIndex(i)]) != keys[i] {
					t.Errorf("KeyIndex(%d) = %d does not hold key %q", i, req.KeyIndex(i), keys[i])
				}
			}
			if !equalStrings(keys, tc.keys) {
				t.Errorf("keys %q, want %q", keys, tc.keys)
			}
		})
	}
}

func equalArgs(a [][]byte, want []string) bool {
	s := make([]string, len(a))
	for i := range a {
		s[i] = string(a[i])
	}
	return equalStrings(s, want)
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestReadErrors checks the sentinel and the closing of each kind of bad
// request; the reply texts are held to redis-server's by
// TestRequestsLikeServer.
func TestReadErrors(t *testing.T) {
	tests := []struct {
		name, in string
		lim      Limits
		want     error
		close    bool
	}{
		{"bad count", "*x\r\n", Limits{}, ErrProtocol, true},
		{"missing dollar", "*1\r\n:1\r\n", Limits{}, ErrProtocol, true},
		{"bad bulk length", "*1\r\n$-1\r\n", Limits{}, ErrProtocol, true},
		{"unbalanced quotes", "GET \"a\r\n", Limits{}, ErrProtocol, true},
		{"bulk over MaxBulk", "*2\r\n$3\r\nGET\r\n$5\r\nhello\r\n", Limits{MaxBulk: 4}, ErrBulkTooLarge, true},
		{"inline arg over MaxBulk", "GET hello\r\n", Limits{MaxBulk: 4}, ErrBulkTooLarge, true},
		{"args over MaxArgs", "*3\r\n$3\r\nDEL\r\n$1\r\na\r\n$1\r\nb\r\n", Limits{MaxArgs: 2}, ErrTooManyArgs, true},
		{"inline args over MaxArgs", "DEL a b\r\n", Limits{MaxArgs: 2}, ErrTooManyArgs, true},
		{"request over MaxRequest", "*2\r\n$3\r\nGET\r\n$10\r\n0123456789\r\n", Limits{MaxRequest: 20}, ErrRequestTooLarge, true},
		{"inline over MaxRequest", "GET 0123456789012345\r\n", Limits{MaxRequest: 20}, ErrRequestTooLarge, true},
		{"inline over MaxLine", "GET 0123456789\r\n", Limits{MaxLine: 8}, ErrLineTooLong, true},
		{"length line over MaxLine", "*000000001\r\n", Limits{MaxLine: 8}, ErrLineTooLong, true},
		{"unauthenticated bulk", "*2\r\n$3\r\nGET\r\n$16385\r\n", Limits{Unauthenticated: true}, ErrBulkTooLarge, true},
		{"unauthenticated count", "*1048577\r\n", Limits{Unauthenticated: true}, ErrTooManyArgs, true},
		{"HTTP", "POST / HTTP/1.1\r\n", Limits{}, ErrCrossProtocol, true},
		{"unknown command", "NOPE\r\n", Limits{}, ErrUnknownCommand, false},
		{"unknown subcommand", "OBJECT NOPE\r\n", Limits{}, ErrUnknownSubcommand, false},
		{"arity", "GET\r\n", Limits{}, ErrArity, false},
		{"mset without value", "MSET a 1 b\r\n", Limits{}, ErrArity, false},
		{"numkeys", "EVAL s 3 a\r\n", Limits{}, ErrNumKeys, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readOne(t, tc.in, tc.lim)
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if e.Close != tc.close {
				t.Errorf("Close = %v, want %v", e.Close, tc.close)
			}
			if tc.want != ErrCrossProtocol && (!strings.HasPrefix(e.Reply, "-") || !strings.HasSuffix(e.Reply, "\r\n")) {
				t.Errorf("reply %q is not an error reply", e.Reply)
			}
		})
	}
}

// TestLimitsAreInclusive: a request exactly at each limit passes.
func TestLimitsAreInclusive(t *testing.T) {
	in := "*2\r\n$3\r\nGET\r\n$4\r\nabcd\r\n" // 24 bytes, 2 args, a 4-byte bulk
	if _, err := readOne(t, in, Limits{MaxBulk: 4, MaxArgs: 2, MaxRequest: len(in), MaxLine: 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := readOne(t, "GET abcd\r\n", Limits{MaxLine: 8, MaxBulk: 4}); err != nil {
		t.Fatal(err)
	}
}

// TestSetLimits: looser limits apply to the next request, as after AUTH.
func TestSetLimits(t *testing.T) {
	big := strings.Repeat("x", 20000)
	in := "*2\r\n$4\r\nECHO\r\n$5\r\nsmall\r\n*2\r\n$4\r\nECHO\r\n$20000\r\n" + big + "\r\n"
	r := NewReader(strings.NewReader(in), Limits{Unauthenticated: true})
	var req Request
	if err := r.Read(&req); err != nil {
		t.Fatal(err)
	}
	r.SetLimits(Limits{})
	if err := r.Read(&req); err != nil || string(req.Args[1]) != big {
		t.Fatalf("after SetLimits: %v", err)
	}
}

func TestReadEOF(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want error
	}{
		{"", io.EOF},
		{"PING\r\n", io.EOF}, // after the request
		{"PIN", io.ErrUnexpectedEOF},
		{"*2\r\n$3\r\nGET\r\n", io.ErrUnexpectedEOF},
		{"*1\r\n$3\r\nGE", io.ErrUnexpectedEOF},
		{"*1\r\n$3\r\nGET", io.ErrUnexpectedEOF},
		{"*1\r", io.ErrUnexpectedEOF},
	} {
		r := NewReader(strings.NewReader(tc.in), Limits{})
		var req Request
		err := r.Read(&req)
		if tc.in == "PING\r\n" {
			err = r.Read(&req)
		}
		if err != tc.want {
			t.Errorf("%q: %v, want %v", tc.in, err, tc.want)
		}
	}
}

// TestRequestsOwnTheirArgs: a request's arguments stay as they were while
// the reader reads the next requests into other Requests.
func TestRequestsOwnTheirArgs(t *testing.T) {
	r := NewReader(strings.NewReader("SET a 1\r\n*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\n2\r\nGET c\r\n"), Limits{})
	var reqs [3]Request
	for i := range reqs {
		if err := r.Read(&reqs[i]); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range [][]string{{"SET", "a", "1"}, {"SET", "b", "2"}, {"GET", "c"}} {
		if !equalArgs(reqs[i].Args, want) {
			t.Errorf("request %d: %q, want %q", i, reqs[i].Args, want)
		}
	}
	// Appending to an argument must not overwrite the next one.
	_ = append(reqs[0].Args[1], 'X')
	if string(reqs[0].Args[2]) != "1" {
		t.Errorf("append to an argument overwrote the next: %q", reqs[0].Args)
	}
}

// TestAnnouncedBulkAllocatesWhatArrives: a client that announces a 500 MB
// argument and sends 10 bytes costs the reader about what arrived, not
// what was announced.
func TestAnnouncedBulkAllocatesWhatArrives(t *testing.T) {
	in := "*2\r\n$3\r\nSET\r\n$500000000\r\n0123456789"
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := readOne(t, in, Limits{})
	runtime.ReadMemStats(&after)
	if err != io.ErrUnexpectedEOF {
		t.Fatalf("got %v, want io.ErrUnexpectedEOF", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("reading 10 bytes of an announced 500 MB argument allocated %d bytes", got)
	}
}

// TestLargeBulk reads an argument larger than the reader's buffer and the
// growth step, whole.
func TestLargeBulk(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 20000) // 320 000 bytes
	req, err := readOne(t, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$320000\r\n"+big+"\r\n", Limits{})
	if err != nil || string(req.Args[2]) != big {
		t.Fatalf("large bulk: %v", err)
	}
}

// TestLongInline reads an inline command longer than the bufio buffer.
func TestLongInline(t *testing.T) {
	keys := strings.Repeat("k ", 20000)
	req, err := readOne(t, "DEL "+keys+"\r\n", Limits{})
	if err != nil || req.NumKeys() != 20000 {
		t.Fatalf("long inline: %d keys, %v", req.NumKeys(), err)
	}
}

// TestRequestSize: Size is the bytes of a request's arguments together,
// read as bulk strings or inline, for a small request and a large one,
// and for a request read into a Request that held a larger one before.
func TestRequestSize(t *testing.T) {
	big := strings.Repeat("v", 100000)
	tests := []struct {
		name, in string
		want     int
	}{
		{"inline", "GET k\r\n", 4},
		{"bulk", "*3\r\n$3\r\nSET\r\n$2\r\nkk\r\n$3\r\nabc\r\n", 8},
		{"large", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000\r\n" + big + "\r\n", 100004},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := readOne(t, tc.in, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if got := req.Size(); got != tc.want {
				t.Errorf("Size() = %d, want %d", got, tc.want)
			}
		})
	}
	r := NewReader(strings.NewReader("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000\r\n"+big+"\r\nGET k\r\n"), Limits{})
	var req Request
	for i, want := range []int{100004, 4} {
		if err := r.Read(&req); err != nil {
			t.Fatal(err)
		}
		if got := req.Size(); got != want {
			t.Errorf("request %d of one Request: Size() = %d, want %d", i, got, want)
		}
	}
}
