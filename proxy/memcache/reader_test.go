package memcache

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func readAll(t *testing.T, in string, lim Limits) ([]Request, []error) {
	t.Helper()
	r := NewReader(strings.NewReader(in), lim)
	var reqs []Request
	var errs []error
	for i := 0; i < 100; i++ {
		var req Request
		err := r.Read(&req)
		if errors.Is(err, io.EOF) {
			return reqs, errs
		}
		reqs = append(reqs, req)
		errs = append(errs, err)
		var pe *Error
		if err != nil && (!errors.As(err, &pe) || pe.Close) {
			return reqs, errs
		}
	}
	t.Fatal("too many requests")
	return nil, nil
}

func TestReadRequests(t *testing.T) {
	long := strings.Repeat("k", MaxKeyLen)
	tests := []struct {
		name, in string
		cmd      Command
		keys     []string
		data     string
		noreply  bool
		check    func(*Request) bool
	}{
		{"get one", "get a\r\n", CmdGet, []string{"a"}, "", false, nil},
		{"get many", "get a b  c\r\n", CmdGet, []string{"a", "b", "c"}, "", false, nil},
		{"gets bare LF", "gets a\n", CmdGets, []string{"a"}, "", false, nil},
		{"gat", "gat 10 a b\r\n", CmdGat, []string{"a", "b"}, "", false, func(r *Request) bool { return r.Exptime == 10 }},
		{"gats negative", "gats -1 a\r\n", CmdGats, []string{"a"}, "", false, func(r *Request) bool { return r.Exptime == -1 }},
		{"get 250-byte key", "get " + long + "\r\n", CmdGet, []string{long}, "", false, nil},
		{"set", "set k 5 0 3\r\nabc\r\n", CmdSet, []string{"k"}, "abc", false, func(r *Request) bool { return r.Flags == 5 }},
		{"set noreply", "set k 0 0 0 noreply\r\n\r\n", CmdSet, []string{"k"}, "", true, nil},
		{"set data with CRLF", "set k 0 0 4\r\na\r\nb\r\n", CmdSet, []string{"k"}, "a\r\nb", false, nil},
		{"add", "add k 0 100 1\r\nx\r\n", CmdAdd, []string{"k"}, "x", false, func(r *Request) bool { return r.Exptime == 100 }},
		{"replace", "replace k 0 0 1\r\nx\r\n", CmdReplace, []string{"k"}, "x", false, nil},
		{"append", "append k 0 0 1\r\nx\r\n", CmdAppend, []string{"k"}, "x", false, nil},
		{"prepend", "prepend k 0 0 1\r\nx\r\n", CmdPrepend, []string{"k"}, "x", false, nil},
		{"cas", "cas k 1 2 1 99 noreply\r\nx\r\n", CmdCas, []string{"k"}, "x", true, func(r *Request) bool { return r.Cas == 99 }},
		{"delete", "delete k\r\n", CmdDelete, []string{"k"}, "", false, nil},
		{"delete 0 noreply", "delete k 0 noreply\r\n", CmdDelete, []string{"k"}, "", true, nil},
		{"incr", "incr k 18446744073709551615\r\n", CmdIncr, []string{"k"}, "", false, func(r *Request) bool { return r.Delta == 1<<64-1 }},
		{"decr noreply", "decr k 1 noreply\r\n", CmdDecr, []string{"k"}, "", true, nil},
		{"touch", "touch k 7\r\n", CmdTouch, []string{"k"}, "", false, func(r *Request) bool { return r.Exptime == 7 }},
		{"version", "version\r\n", CmdVersion, nil, "", false, nil},
		{"quit", "quit\r\n", CmdQuit, nil, "", false, nil},
		{"flush_all", "flush_all 0\r\n", CmdFlushAll, nil, "", false, func(r *Request) bool { return len(r.Args) == 1 }},
		{"stats items", "stats items\r\n", CmdStats, nil, "", false, func(r *Request) bool { return string(r.Args[0]) == "items" }},
		{"mg", "mg foo v k O123 q\r\n", CmdMetaGet, []string{"foo"}, "", true, func(r *Request) bool { return len(r.Args) == 3 }},
		{"mg base64", "mg Zm9v b v\r\n", CmdMetaGet, []string{"Zm9v"}, "", false, func(r *Request) bool { return string(r.Key(0)) == "foo" }},
		{"ms", "ms foo 2 T10 F3\r\nhi\r\n", CmdMetaSet, []string{"foo"}, "hi", false, func(r *Request) bool { return len(r.Args) == 2 }},
		{"md", "md foo q\r\n", CmdMetaDelete, []string{"foo"}, "", true, nil},
		{"ma", "ma foo MD D5\r\n", CmdMetaArithmetic, []string{"foo"}, "", false, nil},
		{"mn", "mn\r\n", CmdMetaNoop, nil, "", false, nil},
		{"me", "me foo\r\n", CmdMetaDebug, []string{"foo"}, "", false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reqs, errs := readAll(t, tc.in, Limits{})
			if len(reqs) != 1 || errs[0] != nil {
				t.Fatalf("got %d requests, errs %v", len(reqs), errs)
			}
			r := &reqs[0]
			if r.Cmd != tc.cmd || r.Noreply != tc.noreply || string(r.Data) != tc.data {
				t.Fatalf("got cmd %v noreply %v data %q", r.Cmd, r.Noreply, r.Data)
			}
			if len(r.Keys) != len(tc.keys) {
				t.Fatalf("keys %q, want %q", r.Keys, tc.keys)
			}
			for i, k := range tc.keys {
				if string(r.Keys[i]) != k {
					t.Fatalf("key %d = %q, want %q", i, r.Keys[i], k)
				}
			}
			if tc.check != nil && !tc.check(r) {
				t.Fatalf("check failed: %+v", r)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	long := strings.Repeat("k", MaxKeyLen+1)
	tests := []struct {
		name, in string
		want     error
		reply    string
		close    bool
	}{
		{"unknown", "bogus\r\n", ErrUnknownCommand, "ERROR\r\n", false},
		{"empty line", "\r\n", ErrUnknownCommand, "ERROR\r\n", false},
		{"get without key", "get\r\n", ErrUnknownCommand, "ERROR\r\n", false},
		{"key too long", "get " + long + "\r\n", ErrKeyTooLong, "CLIENT_ERROR bad command line format\r\n", false},
		{"incr bad delta", "incr k x\r\n", ErrBadCommand, "CLIENT_ERROR invalid numeric delta argument\r\n", false},
		{"incr negative", "incr k -1\r\n", ErrBadCommand, "CLIENT_ERROR invalid numeric delta argument\r\n", false},
		{"set bad length", "set k 0 0 -1\r\n", ErrBadCommand, "CLIENT_ERROR bad command line format\r\n", true},
		{"set missing field", "set k 0 0\r\n", ErrBadCommand, "CLIENT_ERROR bad command line format\r\n", true},
		{"set flags overflow", "set k 4294967296 0 1\r\nx\r\n", ErrBadCommand, "CLIENT_ERROR bad command line format\r\n", true},
		{"set long key", "set " + long + " 0 0 1\r\nx\r\n", ErrKeyTooLong, "CLIENT_ERROR bad command line format\r\n", false},
		{"bad data chunk", "set k 0 0 1\r\nxyz\r\n", ErrBadDataChunk, "CLIENT_ERROR bad data chunk\r\n", true},
		{"too large", "set k 0 0 11\r\nhello world\r\n", ErrTooLarge, "SERVER_ERROR object too large for cache\r\n", false},
		{"line too long", "get " + strings.Repeat("a ", 600000) + "\r\n", ErrLineTooLong, "CLIENT_ERROR line too long\r\n", true},
		{"meta bad flag", "mg foo 1\r\n", ErrBadCommand, "CLIENT_ERROR invalid flag\r\n", false},
		{"meta bad base64", "mg !!! b\r\n", ErrBadCommand, "CLIENT_ERROR error decoding key\r\n", false},
		{"ms bad length", "ms foo x\r\n", ErrBadCommand, "CLIENT_ERROR bad command line format\r\n", true},
		{"touch bad exptime", "touch k x\r\n", ErrBadCommand, "CLIENT_ERROR invalid exptime argument\r\n", false},
		{"mg without key", "mg\r\n", ErrUnknownCommand, "ERROR\r\n", false},
		{"verbosity without level", "verbosity\r\n", ErrUnknownCommand, "ERROR\r\n", false},
		{"meta duplicate flag", "mg foo v v\r\n", ErrBadCommand, "CLIENT_ERROR duplicate flag\r\n", false},
		{"meta duplicate by first letter", "mg foo q qq\r\n", ErrBadCommand, "CLIENT_ERROR duplicate flag\r\n", false},
		{"mg 18 flags", "mg foo" + strings.Repeat(" T1", 1) + " v k s t f c h l O1 P L u N1 R1 E1 x I\r\n", ErrBadCommand, "CLIENT_ERROR options flags are too long\r\n", false},
		{"ms 17 flags", "ms foo 1 T0 F0 I C1 q b k O1 s t c f v h l u N1\r\nx\r\n", ErrBadCommand, "CLIENT_ERROR options flags are too long\r\n", false},
		{"ms bad flag keeps the stream", "ms foo 2 !\r\nhi\r\n", ErrBadCommand, "CLIENT_ERROR invalid flag\r\n", false},
		{"gat line over 2046 bytes", "gat 0" + strings.Repeat(" key", 600) + "\r\n", ErrLineTooLong, "CLIENT_ERROR line too long\r\n", true},
		{"mg line over 2046 bytes", "mg k v O" + strings.Repeat("1", 2100) + "\r\n", ErrLineTooLong, "CLIENT_ERROR line too long\r\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := readAll(t, tc.in, Limits{MaxValue: 10})
			var pe *Error
			if len(errs) == 0 || !errors.As(errs[0], &pe) {
				t.Fatalf("errs %v, want *Error", errs)
			}
			if !errors.Is(pe, tc.want) || pe.Reply != tc.reply || pe.Close != tc.close {
				t.Fatalf("got %v reply %q close %v", pe.Err, pe.Reply, pe.Close)
			}
		})
	}
}

// TestMetaFlagsByFirstLetter: memcached knows a flag by its first letter,
// so "qq" is quiet and "bb" base64, and the proxy must read them so.
func TestMetaFlagsByFirstLetter(t *testing.T) {
	reqs, errs := readAll(t, "mg nokey v qq\r\nmg Zm9v bb v\r\nms foo 2 !\r\nhi\r\nmn\r\n", Limits{MaxValue: 10})
	if len(reqs) != 4 || errs[0] != nil || errs[1] != nil || errs[3] != nil {
		t.Fatalf("got %d requests, errs %v", len(reqs), errs)
	}
	if !reqs[0].Noreply {
		t.Error(`"qq" not read as quiet`)
	}
	if !reqs[1].Base64 || string(reqs[1].Key(0)) != "foo" {
		t.Errorf(`"bb": base64 %v, key %q; want the decoded key "foo"`, reqs[1].Base64, reqs[1].Key(0))
	}
	if reqs[3].Cmd != CmdMetaNoop {
		t.Errorf("after a refused ms, the next request is %v: its data block was read as a command", reqs[3].Cmd)
	}
}

func TestReadResyncsAfterError(t *testing.T) {
	in := "bogus\r\nset k 0 0 11\r\nhello world\r\nget k\r\n"
	reqs, errs := readAll(t, in, Limits{MaxValue: 10})
	if len(reqs) != 3 || errs[2] != nil || reqs[2].Cmd != CmdGet {
		t.Fatalf("got %d requests, errs %v", len(reqs), errs)
	}
}

func TestReadTruncated(t *testing.T) {
	for _, in := range []string{"get k", "set k 0 0 5\r\nab", "set k 0 0 1\r\nx"} {
		r := NewReader(strings.NewReader(in), Limits{})
		var req Request
		if err := r.Read(&req); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%q: got %v, want io.ErrUnexpectedEOF", in, err)
		}
	}
}

// TestAppendRequestRoundTrip checks that what AppendRequest writes reads
// back as the same request (minus noreply, which is never forwarded).
func TestAppendRequestRoundTrip(t *testing.T) {
	in := "get a b\r\ngat 5 a\r\nset k 1 2 3\r\nabc\r\ncas k 1 2 1 7\r\nx\r\n" +
		"incr k 5\r\ntouch k 9\r\ndelete k\r\nms k 2 T1\r\nhi\r\nmg k v\r\nma k\r\nmn\r\n"
	reqs, errs := readAll(t, in, Limits{})
	var out []byte
	for i := range reqs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		out = AppendRequest(out, &reqs[i])
	}
	if string(out) != in {
		t.Fatalf("round trip:\n got %q\nwant %q", out, in)
	}
}

func TestQuiet(t *testing.T) {
	tests := []struct {
		in, reply string
		want      bool
	}{
		{"mg k v q\r\n", "EN\r\n", true},
		{"mg k v q\r\n", "VA 1\r\nx\r\n", false},
		{"mg k v\r\n", "EN\r\n", false},
		{"ms k 1 q\r\nx\r\n", "HD\r\n", true},
		{"ms k 1 q\r\nx\r\n", "NS\r\n", false},
		{"md k q\r\n", "HD\r\n", true},
		{"md k q\r\n", "NF\r\n", false},
		{"md k q\r\n", "EX\r\n", false},
		{"set k 0 0 1 noreply\r\nx\r\n", "STORED\r\n", true},
	}
	for _, tc := range tests {
		reqs, errs := readAll(t, tc.in, Limits{})
		if errs[0] != nil {
			t.Fatal(errs[0])
		}
		if got := Quiet(&reqs[0], []byte(tc.reply)); got != tc.want {
			t.Errorf("Quiet(%q, %q) = %v, want %v", tc.in, tc.reply, got, tc.want)
		}
	}
}

// FuzzReader feeds arbitrary bytes to the request reader: it must not panic
// or loop, must report every error as *Error or an I/O error, and every
// request it accepts must re-encode to bytes that read back the same.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"get a b c\r\n", "set k 0 0 1\r\nx\r\n", "cas k 0 0 1 1 noreply\r\nx\r\n",
		"incr k 1\r\n", "mg Zm9v b v k O1\r\n", "ms k 2 q\r\nhi\r\n", "mn\r\n",
		"set k 0 0 99999999\r\n", "\r\n\r\n", "gat -5 a\n", "delete k 0 noreply\r\n",
		"mg k v qq\r\n", "mg Zm9v bb v\r\n", "ms k 2 !\r\nhi\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewReader(bytes.NewReader(in), Limits{MaxValue: 1 << 10, MaxLine: 512})
		for i := 0; i < 64; i++ {
			var req Request
			err := r.Read(&req)
			var pe *Error
			switch {
			case err == nil:
				checkRoundTrip(t, &req)
				continue
			case errors.As(err, &pe):
				if !strings.HasSuffix(pe.Reply, "\r\n") {
					t.Fatalf("reply %q without CRLF", pe.Reply)
				}
				if !pe.Close {
					continue
				}
			}
			return
		}
	})
}

func checkRoundTrip(t *testing.T, req *Request) {
	t.Helper()
	if req.Cmd == CmdStats || req.Cmd == CmdFlushAll || req.Cmd == CmdVerbosity {
		return
	}
	enc := AppendRequest(nil, req)
	var back Request
	if err := NewReader(bytes.NewReader(enc), Limits{MaxValue: 1 << 10, MaxLine: 1 << 16}).Read(&back); err != nil {
		t.Fatalf("re-reading %q: %v", enc, err)
	}
	if back.Cmd != req.Cmd || len(back.Keys) != len(req.Keys) || !bytes.Equal(back.Data, req.Data) ||
		back.Flags != req.Flags || back.Cas != req.Cas || back.Delta != req.Delta {
		t.Fatalf("round trip of %q differs: %+v vs %+v", enc, back, req)
	}
	for i := range req.Keys {
		if !bytes.Equal(back.Keys[i], req.Keys[i]) {
			t.Fatalf("key %d: %q vs %q", i, back.Keys[i], req.Keys[i])
		}
	}
	// The server must answer every request the proxy forwards, and read
	// its key and flags as the proxy did.
	if back.Noreply {
		t.Fatalf("forwarded %q asks the server not to reply", enc)
	}
	if back.Base64 != req.Base64 || len(back.Args) != len(req.Args) {
		t.Fatalf("round trip of %q: base64 %v vs %v, flags %q vs %q", enc, back.Base64, req.Base64, back.Args, req.Args)
	}
	for i := range req.Args {
		if !bytes.Equal(back.Args[i], req.Args[i]) {
			t.Fatalf("round trip of %q: flag %d %q vs %q", enc, i, back.Args[i], req.Args[i])
		}
	}
}
