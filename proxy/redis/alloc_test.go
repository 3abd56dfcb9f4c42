package redis

import (
	"strconv"
	"strings"
	"testing"
)

// loop is an endless stream repeating b, as a client pipelining the same
// requests for ever.
type loop struct {
	b   []byte
	off int
}

func (l *loop) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], l.b[l.off:])
		n += c
		l.off = (l.off + c) % len(l.b)
	}
	return n, nil
}

// requestStreams are the request mixes of the allocation tests and the
// benchmarks.
var requestStreams = []struct{ name, in string }{
	{"get", "*2\r\n$3\r\nGET\r\n$8\r\nuser:123\r\n"},
	{"set-100", "*3\r\n$3\r\nSET\r\n$8\r\nuser:123\r\n$100\r\n" + strings.Repeat("v", 100) + "\r\n"},
	{"mget-10", mgetRequest(10)},
	{"inline-get", "GET user:123\r\n"},
	{"eval", "*5\r\n$4\r\nEVAL\r\n$8\r\nreturn 1\r\n$1\r\n1\r\n$3\r\n{a}\r\n$1\r\nx\r\n"},
}

func mgetRequest(n int) string {
	s := "*" + strconv.Itoa(n+1) + "\r\n$4\r\nMGET\r\n"
	for i := range n {
		k := "key:" + strconv.Itoa(i)
		s += "$" + strconv.Itoa(len(k)) + "\r\n" + k + "\r\n"
	}
	return s
}

// TestReaderZeroAllocs: once a Request's buffers have grown, reading
// requests into it allocates nothing.
func TestReaderZeroAllocs(t *testing.T) {
	for _, s := range requestStreams {
		t.Run(s.name, func(t *testing.T) {
			r := NewReader(&loop{b: []byte(s.in)}, Limits{})
			var req Request
			if allocs := testing.AllocsPerRun(1000, func() {
				if err := r.Read(&req); err != nil {
					t.Fatal(err)
				}
			}); allocs != 0 {
				t.Errorf("%v allocations per request", allocs)
			}
		})
	}
}

var replyStreams = []struct{ name, in string }{
	{"ok", "+OK\r\n"},
	{"bulk-100", "$100\r\n" + strings.Repeat("v", 100) + "\r\n"},
	{"mget-10", string(bulks("a", "nil", "c", "d", "e", "f", "g", "nil", "i", "j"))},
	{"nested", "*2\r\n*2\r\n:1\r\n$1\r\nx\r\n*1\r\n*0\r\n"},
}

// TestReplyReaderZeroAllocs: reading replies into reused buffers allocates
// nothing.
func TestReplyReaderZeroAllocs(t *testing.T) {
	for _, s := range replyStreams {
		t.Run(s.name, func(t *testing.T) {
			rr := NewReplyReader(&loop{b: []byte(s.in)}, ReplyLimits{})
			var dst []byte
			var elems []Span
			if allocs := testing.AllocsPerRun(1000, func() {
				var err error
				if dst, elems, err = rr.Read(dst[:0], elems[:0]); err != nil {
					t.Fatal(err)
				}
			}); allocs != 0 {
				t.Errorf("%v allocations per reply", allocs)
			}
		})
	}
}

// TestSplitMergeZeroAllocs: splitting an MGET of 10 keys over 3 servers,
// writing its parts and merging their replies allocates nothing once the
// buffers have grown.
func TestSplitMergeZeroAllocs(t *testing.T) {
	req, err := readOne(t, mgetRequest(10), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	server := func(k []byte) int { return int(k[len(k)-1]) % 3 }
	var s Splitter
	if err := s.Split(req, server); err != nil {
		t.Fatal(err)
	}
	replies := make([]Reply, len(s.Parts()))
	for i, p := range s.Parts() {
		vals := make([]string, p.Keys)
		for j := range vals {
			vals[j] = "v"
		}
		replies[i] = replyOf(t, bulks(vals...))
	}
	var out []byte
	if allocs := testing.AllocsPerRun(1000, func() {
		if err := s.Split(req, server); err != nil {
			t.Fatal(err)
		}
		out = out[:0]
		for i := range s.Parts() {
			out = s.AppendPart(out, i)
		}
		var err error
		if out, err = s.Merge(out[:0], replies); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Errorf("%v allocations per request", allocs)
	}
}

// TestEncodeZeroAllocs: the encoders allocate nothing into a buffer with
// room.
func TestEncodeZeroAllocs(t *testing.T) {
	req := mustRead(t, "SET user:123 value")
	buf := make([]byte, 0, 256)
	if allocs := testing.AllocsPerRun(1000, func() {
		b := AppendRequest(buf[:0], req)
		b = AppendBulk(b, req.Args[1])
		b = AppendInt(b, 42)
		b = AppendArrayHeader(b, 2)
		b = AppendError(b, "ERR x")
		_ = AppendNil(b)
	}); allocs != 0 {
		t.Errorf("%v allocations", allocs)
	}
}
