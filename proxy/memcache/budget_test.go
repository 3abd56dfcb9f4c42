package memcache

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// errFull is what testBudget refuses with.
var errFull = errors.New("full")

// testBudget grants up to left bytes and records what it was asked.
type testBudget struct {
	left  int
	asked []int
}

func (b *testBudget) Reserve(n int) error {
	b.asked = append(b.asked, n)
	if n > b.left {
		return errFull
	}
	b.left -= n
	return nil
}

// TestReaderBudget: a data block the budget refuses is read and dropped
// with memcached's out-of-memory reply, and the next request is read; a
// long line is reserved part by part before it is held, and refused with
// the connection closed.
func TestReaderBudget(t *testing.T) {
	b := &testBudget{left: 10}
	reqs, errs := readAll(t, "set a 0 0 5\r\nhello\r\nset b 0 0 20\r\n01234567890123456789\r\nget a\r\n", Limits{Budget: b})
	if len(reqs) != 3 || errs[0] != nil || errs[2] != nil || string(reqs[2].Keys[0]) != "a" {
		t.Fatalf("requests %d, errors %v", len(reqs), errs)
	}
	var pe *Error
	if !errors.As(errs[1], &pe) || pe.Reply != "SERVER_ERROR out of memory storing object\r\n" || pe.Close ||
		!errors.Is(errs[1], ErrNoRoom) || !errors.Is(errs[1], errFull) {
		t.Fatalf("refused block: %v", errs[1])
	}
	if fmt.Sprint(b.asked) != "[5 20]" {
		t.Errorf("asked for %v, want [5 20]", b.asked)
	}

	long := "get " + strings.Repeat("k ", 20000) + "\r\n" // longer than the 16 KiB buffer
	b = &testBudget{left: 1 << 20}
	reqs, errs = readAll(t, long, Limits{Budget: b, MaxLine: 1 << 20})
	if errs[0] != nil || len(reqs[0].Keys) != 20000 {
		t.Fatalf("long get: %v, %d keys", errs[0], len(reqs[0].Keys))
	}
	sum := 0
	for _, n := range b.asked {
		sum += n
	}
	if sum != len(long) {
		t.Errorf("reserved %d bytes for a line of %d", sum, len(long))
	}
	_, errs = readAll(t, long, Limits{Budget: &testBudget{left: 20000}, MaxLine: 1 << 20})
	if !errors.As(errs[0], &pe) || !pe.Close || !errors.Is(errs[0], ErrNoRoom) {
		t.Fatalf("refused line: %v", errs[0])
	}
}

// TestReaderNoKeyLimit: with MaxKeys 0 a get of any number of keys is
// read, as memcached reads it; a positive MaxKeys bounds it.
func TestReaderNoKeyLimit(t *testing.T) {
	get := "get" + strings.Repeat(" key", 10000) + "\r\n"
	reqs, errs := readAll(t, get, Limits{})
	if errs[0] != nil || len(reqs[0].Keys) != 10000 {
		t.Fatalf("10000 keys: %v, got %d", errs[0], len(reqs[0].Keys))
	}
	if _, errs = readAll(t, get, Limits{MaxKeys: 9999}); !errors.Is(errs[0], ErrBadCommand) {
		t.Fatalf("over MaxKeys: %v", errs[0])
	}
}

// TestReplyReaderBudget: a value the budget refuses is read and dropped,
// the rest of the reply kept and the stream left in step.
func TestReplyReaderBudget(t *testing.T) {
	in := "VALUE a 0 3\r\nabc\r\nVALUE b 0 8\r\n12345678\r\nVALUE c 0 1\r\nz\r\nEND\r\nSTORED\r\n"
	rr := NewReplyReader(strings.NewReader(in), 0)
	rr.Budget = &testBudget{left: 5}
	got, spans, err := rr.Read(nil, CmdGet, nil)
	if !errors.Is(err, ErrNoRoom) || !errors.Is(err, errFull) || !Dropped(err) {
		t.Fatalf("error %v, want ErrNoRoom", err)
	}
	if string(got) != "VALUE a 0 3\r\nabc\r\nVALUE c 0 1\r\nz\r\nEND\r\n" || len(spans) != 2 {
		t.Fatalf("reply %q, %d spans", got, len(spans))
	}
	if got, _, err := rr.Read(nil, CmdSet, nil); err != nil || string(got) != "STORED\r\n" {
		t.Fatalf("next reply: %q, %v", got, err)
	}
}
