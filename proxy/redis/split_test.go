package redis

import (
	"errors"
	"strings"
	"testing"
)

// servers maps keys to servers by their first letter, a..z -> 0..2.
func byFirstLetter(key []byte) int { return int(key[0]-'a') % 3 }

// mustRead parses one inline request.
func mustRead(t *testing.T, line string) *Request {
	t.Helper()
	req, err := readOne(t, line+"\r\n", Limits{})
	if err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	return req
}

// partArgs returns the arguments of each part as the server would read
// them.
func partArgs(t *testing.T, s *Splitter) []string {
	t.Helper()
	var out []string
	for i := range s.Parts() {
		req, err := readOne(t, string(s.AppendPart(nil, i)), Limits{})
		if err != nil {
			t.Fatalf("part %d does not parse: %v", i, err)
		}
		var args []string
		for _, a := range req.Args {
			args = append(args, string(a))
		}
		out = append(out, strings.Join(args, " "))
	}
	return out
}

func TestSplitParts(t *testing.T) {
	tests := []struct {
		line    string
		servers []int
		parts   []string
	}{
		{"MGET apple bear cat dog", []int{0, 1, 2}, []string{"mget apple dog", "mget bear", "mget cat"}},
		{"MGET cat apple cat", []int{2, 0}, []string{"mget cat cat", "mget apple"}},
		{"MSET bear 1 apple 2 beef 3", []int{1, 0}, []string{"mset bear 1 beef 3", "mset apple 2"}},
		{"DEL apple bear", []int{0, 1}, []string{"del apple", "del bear"}},
		{"UNLINK apple dog", []int{0}, []string{"UNLINK apple dog"}}, // one server: sent as it came
		{"EXISTS cat", []int{2}, []string{"EXISTS cat"}},
		{"TOUCH bear cat", []int{1, 2}, []string{"touch bear", "touch cat"}},
		{"GET cat", []int{2}, []string{"GET cat"}},
		{"SINTER apple dog", []int{0}, []string{"SINTER apple dog"}},
		{"EVAL s 2 bear beef x", []int{1}, []string{"EVAL s 2 bear beef x"}},
		{"COMMAND COUNT", []int{AnyServer}, []string{"COMMAND COUNT"}},
		{"OBJECT HELP", []int{AnyServer}, []string{"OBJECT HELP"}},
	}
	var s Splitter // one Splitter for every case: it must carry nothing over
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			if err := s.Split(mustRead(t, tc.line), byFirstLetter); err != nil {
				t.Fatal(err)
			}
			var servers []int
			keys := 0
			for _, p := range s.Parts() {
				servers = append(servers, p.Server)
				keys += p.Keys
			}
			if !equalInts(servers, tc.servers) {
				t.Errorf("servers %v, want %v", servers, tc.servers)
			}
			if got := partArgs(t, &s); !equalStrings(got, tc.parts) {
				t.Errorf("parts %q, want %q", got, tc.parts)
			}
		})
	}
}

func equalInts(a, b []int) bool {
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

func TestSplitRefusals(t *testing.T) {
	tests := []struct {
		line string
		want error
	}{
		{"SINTER apple bear", ErrCrossServer},
		{"RENAME apple bear", ErrCrossServer},
		{"EVAL s 2 apple bear", ErrCrossServer},
		{"EVAL s 0", ErrNoKeys},
		{"MULTI", ErrUnsupported},
		{"BLPOP apple 0", ErrUnsupported},
		{"SCAN 0", ErrUnsupported},
		{"PING", ErrLocal},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			var s Splitter
			err := s.Split(mustRead(t, tc.line), byFirstLetter)
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if e.Close || !strings.HasPrefix(e.Reply, "-ERR ") {
				t.Errorf("reply %q close %v: want an -ERR that keeps the connection", e.Reply, e.Close)
			}
		})
	}
}

// replyOf reads one encoded reply back into a Reply.
func replyOf(t *testing.T, b []byte) Reply {
	t.Helper()
	data, elems, err := NewReplyReader(strings.NewReader(string(b)), ReplyLimits{}).Read(nil, nil)
	if err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	return Reply{Data: data, Elems: elems}
}

func bulks(vals ...string) []byte {
	b := AppendArrayHeader(nil, len(vals))
	for _, v := range vals {
		if v == "nil" {
			b = AppendNil(b)
			continue
		}
		b = AppendBulkString(b, v)
	}
	return b
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name, line string
		replies    [][]byte // per part, in Parts order
		want       string
		bad        bool
	}{
		{"mget in key order", "MGET apple bear cat dog", [][]byte{bulks("A", "D"), bulks("nil"), bulks("C")},
			string(bulks("A", "nil", "C", "D")), false},
		{"mget repeated key", "MGET cat apple cat", [][]byte{bulks("C", "C"), bulks("A")}, string(bulks("C", "A", "C")), false},
		{"mget part error", "MGET apple bear", [][]byte{bulks("A"), []byte("-LOADING loading\r\n")}, "-LOADING loading\r\n", false},
		{"mget first error by key order", "MGET bear apple", [][]byte{[]byte("-ERR one\r\n"), []byte("-ERR two\r\n")}, "-ERR one\r\n", false},
		{"mget short array", "MGET apple dog bear", [][]byte{bulks("A"), bulks("B")}, "", true},
		{"mget not an array", "MGET apple bear", [][]byte{[]byte(":1\r\n"), bulks("B")}, "", true},
		{"mset all ok", "MSET apple 1 bear 2", [][]byte{[]byte("+OK\r\n"), []byte("+OK\r\n")}, "+OK\r\n", false},
		{"mset part error", "MSET apple 1 bear 2", [][]byte{[]byte("+OK\r\n"), []byte("-OOM no\r\n")}, "-OOM no\r\n", false},
		{"mset odd reply", "MSET apple 1 bear 2", [][]byte{[]byte("+OK\r\n"), []byte(":1\r\n")}, "", true},
		{"del sum", "DEL apple bear cat", [][]byte{[]byte(":1\r\n"), []byte(":0\r\n"), []byte(":1\r\n")}, ":2\r\n", false},
		{"exists sum", "EXISTS apple apple bear", [][]byte{[]byte(":2\r\n"), []byte(":1\r\n")}, ":3\r\n", false},
		{"del error", "DEL apple bear", [][]byte{[]byte("-ERR down\r\n"), []byte(":1\r\n")}, "-ERR down\r\n", false},
		{"del odd reply", "DEL apple bear", [][]byte{[]byte("+OK\r\n"), []byte(":1\r\n")}, "", true},
		{"one part as it is", "MGET apple dog", [][]byte{bulks("A", "nil")}, string(bulks("A", "nil")), false},
		{"single key as it is", "GET apple", [][]byte{[]byte("$1\r\nA\r\n")}, "$1\r\nA\r\n", false},
		{"wrong number of replies", "DEL apple bear", [][]byte{[]byte(":1\r\n")}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s Splitter
			if err := s.Split(mustRead(t, tc.line), byFirstLetter); err != nil {
				t.Fatal(err)
			}
			replies := make([]Reply, len(tc.replies))
			for i, b := range tc.replies {
				replies[i] = replyOf(t, b)
			}
			got, err := s.Merge([]byte("x"), replies)
			if tc.bad {
				if !errors.Is(err, ErrBadReply) || string(got) != "x" {
					t.Fatalf("got %q, %v; want ErrBadReply and dst unchanged", got, err)
				}
				return
			}
			if err != nil || string(got) != "x"+tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
