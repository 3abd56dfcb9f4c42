package redis

import (
	"bufio"
	"bytes"
	"errors"
	"strings"
	"testing"
)

// testBudget grants up to limit bytes in all and records each grant.
type testBudget struct {
	limit, used int
	grants      []int
}

var errTestFull = errors.New("test budget full")

// capBudget refuses any one reservation over its size.
type capBudget int

func (c capBudget) Reserve(n int) error {
	if n > int(c) {
		return errTestFull
	}
	return nil
}

func (b *testBudget) Reserve(n int) error {
	if b.used+n > b.limit {
		return errTestFull
	}
	b.used += n
	b.grants = append(b.grants, n)
	return nil
}

// TestReaderBudget: a request's first 64 KiB are held without asking the
// Budget; past them a large argument is asked for whole, once, when its
// length has been read; a request the Budget has no room for is dropped
// whole and gets -OOM, and the next request is read in step.
func TestReaderBudget(t *testing.T) {
	big := strings.Repeat("v", 200<<10)
	stream := string(AppendArgs(nil, [][]byte{[]byte("SET"), []byte("a"), []byte("small")})) +
		string(AppendArgs(nil, [][]byte{[]byte("SET"), []byte("b"), []byte(big)})) +
		string(AppendArgs(nil, [][]byte{[]byte("GET"), []byte("c")}))
	b := &testBudget{limit: 1 << 30}
	r := NewReader(strings.NewReader(stream), Limits{Budget: b})
	var req Request
	if err := r.Read(&req); err != nil || len(b.grants) != 0 {
		t.Fatalf("a small request: %v, grants %v; want none", err, b.grants)
	}
	err := r.Read(&req)
	held := len("SET") + len("b") + len(big)
	if want := len(big) - (freeRequest - len("SET") - len("b")); err != nil || len(b.grants) != 1 || b.grants[0] != want {
		t.Fatalf("a request holding %d bytes: %v, grants %v; want one of %d, all but the first %d", held, err, b.grants, want, freeRequest)
	}
	full := &testBudget{limit: 100 << 10}
	r = NewReader(strings.NewReader(stream), Limits{Budget: full})
	if err := r.Read(&req); err != nil {
		t.Fatal(err)
	}
	err = r.Read(&req)
	var re *Error
	if !errors.As(err, &re) || re.Close || !errors.Is(err, ErrNoRoom) || !errors.Is(err, errTestFull) || !strings.HasPrefix(re.Reply, "-OOM ") {
		t.Fatalf("a request over the budget: %v", err)
	}
	if err := r.Read(&req); err != nil || string(req.Args[1]) != "c" {
		t.Fatalf("the request after the dropped one: %q, %v", req.Args, err)
	}
}

// TestReplyReaderBudget: a reply with a bulk string the Budget has no
// room for, whole in the buffer or not, is dropped with ErrNoRoom and the
// next reply is read in step.
func TestReplyReaderBudget(t *testing.T) {
	for _, size := range []int{10, 100 << 10} {
		var stream bytes.Buffer
		stream.Write(AppendArgs(nil, [][]byte{[]byte("x"), bytes.Repeat([]byte("v"), size)}))
		stream.WriteString("+OK\r\n")
		rr := NewReplyReader(bufio.NewReader(&stream), ReplyLimits{})
		rr.Budget = &testBudget{limit: 5}
		got, elems, err := rr.Read([]byte("kept"), nil)
		if !errors.Is(err, ErrNoRoom) || !errors.Is(err, errTestFull) || string(got) != "kept" || len(elems) != 0 {
			t.Fatalf("bulk of %d bytes over the budget: %q %v %v", size, got, elems, err)
		}
		rr.Budget = nil
		if got, _, err := rr.Read(nil, nil); string(got) != "+OK\r\n" || err != nil {
			t.Fatalf("the reply after the dropped one: %q %v", got, err)
		}
	}
}
