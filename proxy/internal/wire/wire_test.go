package wire_test

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/proxy/internal/wire"
)

func TestParseUint(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true}, {"007", 7, true}, {"18446744073709551615", 1<<64 - 1, true},
		{"18446744073709551616", 0, false}, {"", 0, false}, {"-1", 0, false}, {"+1", 0, false},
		{"1 ", 0, false}, {"000000000000000000001", 0, false}, {"1a", 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got, ok := wire.ParseUint([]byte(tc.in)); got != tc.want || ok != tc.ok {
				t.Errorf("ParseUint(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// FuzzParseUint holds ParseUint to strconv.ParseUint on inputs of at most
// 20 bytes, as both protocols write numbers.
func FuzzParseUint(f *testing.F) {
	for _, s := range []string{"0", "42", "18446744073709551615", "18446744073709551616", "-3", "+3", "", "9x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := wire.ParseUint([]byte(s))
		want, err := strconv.ParseUint(s, 10, 64)
		wantOK := err == nil && len(s) <= 20 && !strings.HasPrefix(s, "+")
		if ok != wantOK || ok && got != want {
			t.Errorf("ParseUint(%q) = %d, %v; strconv says %d, %v", s, got, ok, want, err)
		}
	})
}

func TestSkipBlock(t *testing.T) {
	for _, tc := range []struct {
		in    string
		n     int
		ended bool
		err   error
		rest  string
	}{
		{"abc\r\nnext", 3, true, nil, "next"},
		{"abc\n\nnext", 3, false, nil, "next"},
		{"ab", 3, false, io.ErrUnexpectedEOF, ""},
		{"abc\r", 3, false, io.ErrUnexpectedEOF, ""},
	} {
		br := bufio.NewReader(strings.NewReader(tc.in))
		ended, err := wire.SkipBlock(br, tc.n)
		rest, _ := io.ReadAll(br)
		if ended != tc.ended || !errors.Is(err, tc.err) || (tc.err == nil && err != nil) || string(rest) != tc.rest {
			t.Errorf("SkipBlock(%q, %d) = %v, %v, rest %q; want %v, %v, rest %q", tc.in, tc.n, ended, err, rest, tc.ended, tc.err, tc.rest)
		}
	}
}

// TestInput: what a codec has buffered and not read is what Unread
// returns, a copy; Wait reads nothing.
func TestInput(t *testing.T) {
	br := bufio.NewReaderSize(strings.NewReader("get a\r\nget b\r\n"), 16)
	in := wire.NewInput(br)
	if line, err := br.ReadSlice('\n'); err != nil || string(line) != "get a\r\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	if err := in.Wait(); err != nil {
		t.Fatal(err)
	}
	rest := in.Unread()
	if in.Buffered() != 7 || string(rest) != "get b\r\n" {
		t.Fatalf("Buffered %d, Unread %q", in.Buffered(), rest)
	}
	rest[0] = 'X'
	if line, _ := br.ReadSlice('\n'); string(line) != "get b\r\n" {
		t.Errorf("Unread's copy shares the buffer: the stream reads %q", line)
	}
	if err := in.Wait(); err != io.EOF {
		t.Errorf("Wait at the end: %v, want EOF", err)
	}
}
