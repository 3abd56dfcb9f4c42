package redis

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestReadReply(t *testing.T) {
	tests := []struct {
		name, in string
		elems    []string // the array's elements, as bytes
	}{
		{"simple string", "+OK\r\n", nil},
		{"error", "-ERR no such key\r\n", nil},
		{"integer", ":-42\r\n", nil},
		{"bulk", "$5\r\nhello\r\n", nil},
		{"bulk with CRLF inside", "$4\r\n\r\n\r\n\r\n", nil},
		{"empty bulk", "$0\r\n\r\n", nil},
		{"nil bulk", "$-1\r\n", nil},
		{"nil array", "*-1\r\n", nil},
		{"empty array", "*0\r\n", nil},
		{"mget", "*3\r\n$1\r\na\r\n$-1\r\n$2\r\nbc\r\n", []string{"$1\r\na\r\n", "$-1\r\n", "$2\r\nbc\r\n"}},
		{"mixed", "*4\r\n+OK\r\n-ERR x\r\n:1\r\n*0\r\n", []string{"+OK\r\n", "-ERR x\r\n", ":1\r\n", "*0\r\n"}},
		{"nested", "*2\r\n*2\r\n:1\r\n*1\r\n$1\r\nx\r\n:2\r\n", []string{"*2\r\n:1\r\n*1\r\n$1\r\nx\r\n", ":2\r\n"}},
		{"nested last", "*2\r\n:0\r\n*2\r\n*1\r\n:1\r\n*0\r\n", []string{":0\r\n", "*2\r\n*1\r\n:1\r\n*0\r\n"}},
		// RESP3, as redis-server 7.0 sends it after HELLO 3.
		{"resp3 null", "_\r\n", nil},
		{"resp3 booleans", "*2\r\n#t\r\n#f\r\n", []string{"#t\r\n", "#f\r\n"}},
		{"resp3 double", ",1.5\r\n", nil},
		{"resp3 double inf", ",-inf\r\n", nil},
		{"resp3 big number", "(3492890328409238509324850943850943825024385\r\n", nil},
		{"resp3 verbatim", "=15\r\ntxt:Some string\r\n", nil},
		{"resp3 blob error", "!21\r\nSYNTAX invalid syntax\r\n", nil},
		{"resp3 map", "%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n_\r\n", []string{"$1\r\na\r\n", ":1\r\n", "$1\r\nb\r\n", "_\r\n"}},
		{"resp3 empty map", "%0\r\n", nil},
		{"resp3 set", "~2\r\n$1\r\nx\r\n$1\r\ny\r\n", []string{"$1\r\nx\r\n", "$1\r\ny\r\n"}},
		{"resp3 push", ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nm\r\n", []string{"$7\r\nmessage\r\n", "$2\r\nch\r\n", "$1\r\nm\r\n"}},
		{"resp3 nested map", "*2\r\n%1\r\n+k\r\n~1\r\n,2\r\n:3\r\n", []string{"%1\r\n+k\r\n~1\r\n,2\r\n", ":3\r\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Two replies back to back: the reader must stop at the end
			// of the first.
			rr := NewReplyReader(strings.NewReader(tc.in+tc.in), ReplyLimits{RESP3: strings.HasPrefix(tc.name, "resp3")})
			for range 2 {
				got, elems, err := rr.Read([]byte("prefix"), []Span{{-1, -1}})
				if err != nil {
					t.Fatal(err)
				}
				if string(got[len("prefix"):]) != tc.in {
					t.Fatalf("reply %q, want %q", got, tc.in)
				}
				reply := got[len("prefix"):]
				elems = elems[1:]
				if len(elems) != len(tc.elems) {
					t.Fatalf("%d elements, want %d", len(elems), len(tc.elems))
				}
				for i, sp := range elems {
					if e := string(reply[sp.Start:sp.End]); e != tc.elems[i] {
						t.Errorf("element %d = %q, want %q", i, e, tc.elems[i])
					}
				}
			}
		})
	}
}

func TestReadReplyErrors(t *testing.T) {
	for _, in := range []string{
		"OK\r\n",           // no type byte
		"+OK\n",            // no CR
		":1x\r\n",          // not an integer
		":\r\n",            // empty integer
		"$-2\r\n",          // bad bulk length
		"$3\r\nabcd\r\n",   // bulk longer than announced
		"$3\r\nab\r\n\r\n", // bulk shorter than announced
		"*-2\r\n",          // bad array length
		"*2147483648\r\n",  // array longer than any
		"%1\r\n",           // RESP3 map
		"_\r\n",            // RESP3 null
		"\r\n",             // empty line
	} {
		_, _, err := NewReplyReader(strings.NewReader(in), ReplyLimits{}).Read(nil, nil)
		if !errors.Is(err, ErrBadReply) {
			t.Errorf("%q: got %v, want ErrBadReply", in, err)
		}
	}
	// With RESP3 on, what RESP3 does not allow either.
	for _, in := range []string{
		"|1\r\n+a\r\n+b\r\n:1\r\n", // an attribute: redis-server sends none
		"_x\r\n",                   // a null with something after it
		"#x\r\n",                   // neither true nor false
		",\r\n",                    // an empty double
		"%-1\r\n",                  // RESP3 has no nil aggregates
		"%1073741824\r\n",          // more pairs than any array holds
		"=-1\r\n",                  // nor nil verbatim strings
	} {
		_, _, err := NewReplyReader(strings.NewReader(in), ReplyLimits{RESP3: true}).Read(nil, nil)
		if !errors.Is(err, ErrBadReply) {
			t.Errorf("RESP3 %q: got %v, want ErrBadReply", in, err)
		}
	}
}

func TestReadReplyEOF(t *testing.T) {
	rr := NewReplyReader(strings.NewReader(":1\r\n"), ReplyLimits{})
	if _, _, err := rr.Read(nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := rr.Read(nil, nil); err != io.EOF {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}
}

func TestReadReplyCut(t *testing.T) {
	for _, in := range []string{"+OK", "$5\r\nhel", "*2\r\n:1\r\n", "*1\r\n*1\r\n"} {
		_, _, err := NewReplyReader(strings.NewReader(in), ReplyLimits{}).Read(nil, nil)
		if err != io.ErrUnexpectedEOF {
			t.Errorf("%q: got %v, want io.ErrUnexpectedEOF", in, err)
		}
	}
}

// TestReplyOverLimitsKeepsStep: a reply over a limit is dropped whole, dst
// and elems come back as they were, and the next reply is read in step.
func TestReplyOverLimitsKeepsStep(t *testing.T) {
	deep := strings.Repeat("*1\r\n", 10) + ":1\r\n"
	long := "+" + strings.Repeat("x", 40000) + "\r\n"
	tests := []struct {
		name, in string
		lim      ReplyLimits
		want     error
	}{
		{"bulk over MaxBulk", "$20\r\n" + strings.Repeat("x", 20) + "\r\n", ReplyLimits{MaxBulk: 10}, ErrReplyTooLarge},
		{"nested bulk over MaxBulk", "*3\r\n:1\r\n*2\r\n$20\r\n" + strings.Repeat("x", 20) + "\r\n$-1\r\n+OK\r\n", ReplyLimits{MaxBulk: 10}, ErrReplyTooLarge},
		{"array over MaxReply", "*3\r\n$10\r\n0123456789\r\n$10\r\n0123456789\r\n:7\r\n", ReplyLimits{MaxReply: 30}, ErrReplyTooLarge},
		{"elements over MaxReply", "*20\r\n" + strings.Repeat(":1\r\n", 20), ReplyLimits{MaxReply: 200}, ErrReplyTooLarge},
		{"line over MaxReply", long, ReplyLimits{MaxReply: 1000}, ErrReplyTooLarge},
		{"long line in a dropped array", "*2\r\n$20\r\n" + strings.Repeat("x", 20) + "\r\n" + long, ReplyLimits{MaxBulk: 10}, ErrReplyTooLarge},
		{"too deep", deep, ReplyLimits{MaxDepth: 5}, ErrReplyTooDeep},
		{"too deep with more after", "*2\r\n" + deep + "$3\r\nabc\r\n", ReplyLimits{MaxDepth: 5}, ErrReplyTooDeep},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rr := NewReplyReader(strings.NewReader(tc.in+"+NEXT\r\n"), tc.lim)
			dst, elems, err := rr.Read([]byte("keep"), []Span{{1, 2}})
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if string(dst) != "keep" || len(elems) != 1 {
				t.Errorf("dst %q, %d elems: want them as they were", dst, len(elems))
			}
			got, _, err := rr.Read(nil, nil)
			if err != nil || string(got) != "+NEXT\r\n" {
				t.Errorf("next reply %q, %v: out of step", got, err)
			}
		})
	}
}

// TestReplyDeepWithinLimit reads a reply nested to exactly MaxDepth.
func TestReplyDeepWithinLimit(t *testing.T) {
	in := strings.Repeat("*1\r\n", 64) + ":1\r\n"
	got, elems, err := NewReplyReader(strings.NewReader(in), ReplyLimits{}).Read(nil, nil)
	if err != nil || string(got) != in || len(elems) != 1 || elems[0] != (Span{4, len(in)}) {
		t.Fatalf("depth 64: %v, %v", err, elems)
	}
}

// TestReplyLargeBulk reads a value larger than the buffer and the growth
// step.
func TestReplyLargeBulk(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 20000)
	in := "$320000\r\n" + big + "\r\n"
	got, _, err := NewReplyReader(strings.NewReader(in), ReplyLimits{}).Read(nil, nil)
	if err != nil || string(got) != in {
		t.Fatalf("large bulk: %v", err)
	}
}

func TestWaitReply(t *testing.T) {
	pr, pw := io.Pipe()
	rr := NewReplyReader(pr, ReplyLimits{})
	waited := make(chan error, 1)
	go func() { waited <- rr.Wait() }()
	go func() { _, _ = pw.Write([]byte("+OK\r\n:1\r\n")) }()
	if err := <-waited; err != nil {
		t.Fatalf("Wait: %v", err)
	}
	// Wait consumes nothing: both replies are read whole.
	for _, want := range []string{"+OK\r\n", ":1\r\n"} {
		got, _, err := rr.Read(nil, nil)
		if err != nil || string(got) != want {
			t.Fatalf("Read = %q, %v; want %q", got, err, want)
		}
	}
	pw.Close()
	done := make(chan error, 1)
	go func() { done <- rr.Wait() }()
	select {
	case err := <-done:
		if err != io.EOF {
			t.Fatalf("Wait at EOF = %v, want io.EOF", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not return at EOF") // a guard, not a timing check
	}
}

func TestIntegerAndIsError(t *testing.T) {
	for _, tc := range []struct {
		in    string
		n     int64
		ok    bool
		isErr bool
	}{
		{":0\r\n", 0, true, false},
		{":-9223372036854775808\r\n", -1 << 63, true, false},
		{":12\r\n", 12, true, false},
		{":12", 0, false, false},
		{"+12\r\n", 0, false, false},
		{"-ERR x\r\n", 0, false, true},
		{"", 0, false, false},
	} {
		n, ok := Integer([]byte(tc.in))
		if n != tc.n || ok != tc.ok || IsError([]byte(tc.in)) != tc.isErr {
			t.Errorf("%q: Integer %d %v, IsError %v", tc.in, n, ok, IsError([]byte(tc.in)))
		}
	}
}

func TestParseInt(t *testing.T) {
	for _, tc := range []struct {
		in string
		n  int64
		ok bool
	}{
		{"0", 0, true}, {"7", 7, true}, {"-7", -7, true}, {"10", 10, true},
		{"9223372036854775807", 1<<63 - 1, true}, {"-9223372036854775808", -1 << 63, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false},
		{"", 0, false}, {"-", 0, false}, {"+1", 0, false}, {"01", 0, false}, {"-0", 0, false},
		{"00", 0, false}, {" 1", 0, false}, {"1 ", 0, false}, {"1x", 0, false},
		{"99999999999999999999", 0, false}, {"123456789012345678901", 0, false},
	} {
		n, ok := parseInt([]byte(tc.in))
		if n != tc.n || ok != tc.ok {
			t.Errorf("parseInt(%q) = %d, %v; want %d, %v", tc.in, n, ok, tc.n, tc.ok)
		}
	}
}

// TestReplyElemsAppend: spans are appended to the caller's slice,
// counted from the start of this reply.
func TestReplyElemsAppend(t *testing.T) {
	rr := NewReplyReader(strings.NewReader("*1\r\n:1\r\n*1\r\n:2\r\n"), ReplyLimits{})
	dst, elems, _ := rr.Read(nil, nil)
	dst, elems, err := rr.Read(dst, elems)
	if err != nil || len(elems) != 2 {
		t.Fatalf("%v, %v", err, elems)
	}
	second := dst[len("*1\r\n:1\r\n"):]
	if !bytes.Equal(second[elems[1].Start:elems[1].End], []byte(":2\r\n")) {
		t.Errorf("second span %v in %q", elems[1], second)
	}
}
