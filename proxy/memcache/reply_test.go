package memcache

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
		cmd      Command
		want     string
		keys     []string
	}{
		{"stored", "STORED\r\n", CmdSet, "STORED\r\n", nil},
		{"miss", "END\r\n", CmdGet, "END\r\n", nil},
		{"two values", "VALUE a 0 1\r\nx\r\nVALUE bb 5 2 77\r\nyz\r\nEND\r\n", CmdGets,
			"VALUE a 0 1\r\nx\r\nVALUE bb 5 2 77\r\nyz\r\nEND\r\n", []string{"a", "bb"}},
		{"value with CRLF data", "VALUE a 0 4\r\n\r\n\r\n\r\nEND\r\n", CmdGet, "VALUE a 0 4\r\n\r\n\r\n\r\nEND\r\n", []string{"a"}},
		{"server error in get", "SERVER_ERROR out of memory\r\n", CmdGet, "SERVER_ERROR out of memory\r\n", nil},
		{"mg value", "VA 2 k Ofoo\r\nhi\r\n", CmdMetaGet, "VA 2 k Ofoo\r\nhi\r\n", nil},
		{"mg hit no value", "HD f0\r\n", CmdMetaGet, "HD f0\r\n", nil},
		{"incr", "42\r\n", CmdIncr, "42\r\n", nil},
		{"stats", "STAT pid 1\r\nSTAT x 2\r\nEND\r\n", CmdStats, "STAT pid 1\r\nSTAT x 2\r\nEND\r\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Two replies back to back: the reader must stop at the first.
			rr := NewReplyReader(strings.NewReader(tc.in+tc.in), 0)
			for range 2 {
				got, spans, err := rr.Read([]byte("prefix"), tc.cmd, nil)
				if err != nil {
					t.Fatal(err)
				}
				got = got[len("prefix"):]
				if string(got) != tc.want {
					t.Fatalf("got %q, want %q", got, tc.want)
				}
				if len(spans) != len(tc.keys) {
					t.Fatalf("spans %v, keys %q", spans, tc.keys)
				}
				for i, sp := range spans {
					full := got
					if k := full[sp.KeyStart:sp.KeyEnd]; string(k) != tc.keys[i] {
						t.Fatalf("span %d key %q, want %q", i, k, tc.keys[i])
					}
					if !bytes.HasPrefix(full[sp.Start:], []byte("VALUE ")) || !bytes.HasSuffix(full[:sp.End], []byte("\r\n")) {
						t.Fatalf("span %d = %q", i, full[sp.Start:sp.End])
					}
				}
			}
		})
	}
}

func TestReadReplyErrors(t *testing.T) {
	for _, in := range []string{"VALUE a 0 x\r\n", "VALUE a 0 1\r\nxyz\r\n", "X\r\n", "STORED\n", "VALUE a 0 99999999999\r\n"} {
		_, _, err := NewReplyReader(strings.NewReader(in), 1<<10).Read(nil, CmdGet, nil)
		if !errors.Is(err, ErrBadReply) {
			t.Errorf("%q: got %v, want ErrBadReply", in, err)
		}
	}
}

// TestReplyValueOverLimit: a value over the limit is dropped and the rest
// of the reply read, so the next reply is read in step.
func TestReplyValueOverLimit(t *testing.T) {
	big := strings.Repeat("x", 20)
	in := "VALUE a 0 1\r\na\r\nVALUE b 0 20\r\n" + big + "\r\nEND\r\nVA 20\r\n" + big + "\r\nSTORED\r\n"
	rr := NewReplyReader(strings.NewReader(in), 10)
	got, spans, err := rr.Read(nil, CmdGet, nil)
	if !errors.Is(err, ErrValueTooLarge) || string(got) != "VALUE a 0 1\r\na\r\nEND\r\n" || len(spans) != 1 {
		t.Fatalf("get = %q, %d spans, %v; want the small value and ErrValueTooLarge", got, len(spans), err)
	}
	if _, _, err := rr.Read(nil, CmdMetaGet, nil); !errors.Is(err, ErrValueTooLarge) {
		t.Fatalf("mg: %v, want ErrValueTooLarge", err)
	}
	if got, _, err := rr.Read(nil, CmdSet, nil); err != nil || string(got) != "STORED\r\n" {
		t.Fatalf("the next reply: %q, %v", got, err)
	}
}

// FuzzReplyReader checks that arbitrary server bytes never panic the reply
// reader and that spans always lie inside the returned reply.
func FuzzReplyReader(f *testing.F) {
	for _, s := range []string{"VALUE a 0 1\r\nx\r\nEND\r\n", "VA 1 k\r\nx\r\n", "STORED\r\n", "STAT a 1\r\nEND\r\n"} {
		f.Add([]byte(s), uint8(CmdGet))
	}
	f.Fuzz(func(t *testing.T, in []byte, cmd uint8) {
		c := Command(cmd % uint8(CmdMetaDebug+1))
		got, spans, err := NewReplyReader(bytes.NewReader(in), 1<<10).Read(nil, c, nil)
		if err != nil {
			return
		}
		for _, sp := range spans {
			if sp.Start < 0 || sp.End > len(got) || sp.KeyStart < sp.Start || sp.KeyEnd > sp.End {
				t.Fatalf("span %+v outside reply of %d bytes", sp, len(got))
			}
		}
	})
}

func TestWaitReply(t *testing.T) {
	pr, pw := io.Pipe()
	rr := NewReplyReader(pr, 0)
	waited := make(chan error, 1)
	go func() { waited <- rr.Wait() }()
	select {
	case err := <-waited:
		t.Fatalf("Wait returned %v before any reply", err)
	case <-time.After(20 * time.Millisecond):
	}
	go pw.Write([]byte("STORED\r\nEND\r\n"))
	if err := <-waited; err != nil {
		t.Fatalf("Wait: %v", err)
	}
	// Wait consumes nothing: both replies are read whole.
	for _, want := range []string{"STORED\r\n", "END\r\n"} {
		cmd := CmdSet
		if want == "END\r\n" {
			cmd = CmdGet
		}
		got, _, err := rr.Read(nil, cmd, nil)
		if err != nil || string(got) != want {
			t.Fatalf("Read = %q, %v; want %q", got, err, want)
		}
	}
	pw.Close()
	if err := rr.Wait(); err != io.EOF {
		t.Fatalf("Wait at EOF = %v, want io.EOF", err)
	}
}
