package redis

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
	"testing/iotest"
)

// FuzzReader feeds arbitrary client bytes to the Reader, under small
// limits so that the fuzzer cannot make it allocate much. It must never
// panic or loop; it must read the bytes alike whether they come at once or
// a byte at a time; every request it returns must have a command and keys
// inside its arguments, encode back to the same request, and split into
// parts that parse and hold its keys.
func FuzzReader(f *testing.F) {
	for _, seed := range []string{
		"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",            // a request as clients send it
		"SET k v\r\nGET k\r\n",                      // inline commands, pipelined
		"MGET a b c\r\nMSET a 1 b 2\r\nDEL a b\r\n", // the split commands
		"EVAL s 2 a b x\r\nZUNIONSTORE d 2 a b\r\n", // numkeys
		"SORT a BY x STORE d\r\nGEORADIUS k 0 0 1 m STORE d\r\n",
		"OBJECT ENCODING k\r\nXGROUP CREATE s g $\r\n", // subcommands
		"ECHO \"a\\x41\\n\" 'b\\'c'\r\n",               // quotes and escapes
		"*1\rX$4\r\nPINGxx",                            // bytes redis-server skips unread
		"*1\r\n$-1\r\n",                                // a bad bulk length
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$99999\r\nv",    // a bulk longer than sent
		"ECHO \"ab\r\n",                                // unbalanced quotes
		"\r\n*0\r\n*-1\r\nPING\r\n",                    // empty requests
		"POST / HTTP/1.1\r\n",                          // cross-protocol
		"foo\x00bar\r\n",                               // a NUL in an inline command
	} {
		f.Add([]byte(seed))
	}
	lim := Limits{MaxBulk: 1 << 10, MaxArgs: 64, MaxRequest: 1 << 12, MaxLine: 1 << 10}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewReader(bytes.NewReader(in), lim)
		// The same bytes a byte at a time: nothing is ever whole in the
		// buffer, so that every argument takes the general path.
		slow := NewReader(iotest.OneByteReader(bytes.NewReader(in)), lim)
		var req, slowReq Request
		for range len(in) + 1 { // each Read consumes a byte at least
			err := r.Read(&req)
			if slowErr := slow.Read(&slowReq); !sameRead(&req, err, &slowReq, slowErr) {
				t.Fatalf("whole: %q, %v; a byte at a time: %q, %v", req.Args, err, slowReq.Args, slowErr)
			}
			var e *Error
			switch {
			case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
				return
			case errors.As(err, &e):
				if e.Close {
					return
				}
				continue
			case err != nil:
				t.Fatalf("error of no known kind: %v", err)
			}
			checkRequest(t, &req, lim)
		}
		t.Fatal("more requests than bytes")
	})
}

// sameRead reports whether two reads gave the same request or the same
// error.
func sameRead(a *Request, aErr error, b *Request, bErr error) bool {
	var ae, be *Error
	switch {
	case errors.As(aErr, &ae) && errors.As(bErr, &be):
		return *ae == *be
	case aErr != nil || bErr != nil:
		return aErr == bErr
	}
	return a.Cmd == b.Cmd && slices.EqualFunc(a.Args, b.Args, bytes.Equal) && slices.Equal(a.keys, b.keys)
}

// checkRequest checks what FuzzReader promises of one request.
func checkRequest(t *testing.T, req *Request, lim Limits) {
	t.Helper()
	if req.Cmd == nil || len(req.Args) == 0 {
		t.Fatalf("request without command: %q", req.Args)
	}
	for i := range req.NumKeys() {
		if at := req.KeyIndex(i); at < 1 || at >= len(req.Args) {
			t.Fatalf("key %d at %d of %d args", i, at, len(req.Args))
		}
	}
	var again Request
	enc := AppendRequest(nil, req)
	if err := NewReader(bytes.NewReader(enc), Limits{}).Read(&again); err != nil {
		t.Fatalf("%q encodes to %q, which reads as %v", req.Args, enc, err)
	}
	if again.Cmd != req.Cmd || !slices.EqualFunc(again.Args, req.Args, bytes.Equal) || !slices.Equal(again.keys, req.keys) {
		t.Fatalf("%q read back as %q", req.Args, again.Args)
	}
	var s Splitter
	if s.Split(req, func(k []byte) int { return len(k) % 3 }) != nil {
		return
	}
	keys := 0
	for i, p := range s.Parts() {
		var part Request
		if err := NewReader(bytes.NewReader(s.AppendPart(nil, i)), Limits{}).Read(&part); err != nil {
			t.Fatalf("part %d of %q: %v", i, req.Args, err)
		}
		keys += part.NumKeys()
		if p.Keys != part.NumKeys() && len(s.Parts()) > 1 {
			t.Fatalf("part %d of %q holds %d keys, says %d", i, req.Args, part.NumKeys(), p.Keys)
		}
	}
	if keys != req.NumKeys() {
		t.Fatalf("parts of %q hold %d keys, want %d", req.Args, keys, req.NumKeys())
	}
}

// FuzzReplyReader feeds arbitrary server bytes to ReplyReaders, one with
// small limits (and a Budget that refuses bulk strings over 100 bytes)
// and one with large, and one reading a byte at a time. None may panic;
// the bytes must read alike whether they come at once or a byte at a
// time; every reply read must lie whole in what was returned, its
// elements tiling it after the header; and the small reader must stay in
// step with the large one, dropping whole the replies over its limits.
func FuzzReplyReader(f *testing.F) {
	for _, seed := range []string{
		"+OK\r\n-ERR x\r\n:42\r\n",                                                    // one-line replies
		"$5\r\nhello\r\n$-1\r\n$0\r\n\r\n",                                            // bulk strings and nil
		"*3\r\n$1\r\na\r\n$-1\r\n:1\r\n*-1\r\n*0\r\n",                                 // arrays, nil, empty
		"*2\r\n*2\r\n:1\r\n*1\r\n+x\r\n$3\r\nabc\r\n",                                 // nesting
		"*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n+NEXT\r\n",       // deeper than the small limit
		"$600\r\n" + string(make([]byte, 600)) + "\r\n+NEXT\r\n",                      // over the small MaxBulk
		"%1\r\n+a\r\n+b\r\n",                                                          // RESP3: a map
		">2\r\n$1\r\na\r\n~1\r\n_\r\n=5\r\ntxt:x\r\n!1\r\nx\r\n#t\r\n,1.5\r\n(12\r\n", // RESP3's other types
		"$3\r\nabcd\r\n", // a bulk longer than announced
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		// The bytes as RESP2, then as RESP3.
		fuzzReplies(t, in, false)
		fuzzReplies(t, in, true)
	})
}

// fuzzReplies is FuzzReplyReader's check of in, read as RESP3 when resp3
// is set.
func fuzzReplies(t *testing.T, in []byte, resp3 bool) {
	small := ReplyLimits{MaxBulk: 512, MaxReply: 2048, MaxDepth: 8, RESP3: resp3}
	rs := NewReplyReader(bytes.NewReader(in), small)
	rs.Budget = capBudget(100)
	rl := NewReplyReader(bytes.NewReader(in), ReplyLimits{RESP3: resp3})
	// The same bytes a byte at a time: nothing is ever whole in the
	// buffer, so that every bulk string takes the general path.
	r1 := NewReplyReader(iotest.OneByteReader(bytes.NewReader(in)), ReplyLimits{RESP3: resp3})
	for range len(in) + 1 {
		want, _, wantErr := rl.Read(nil, nil)
		if one, _, oneErr := r1.Read(nil, nil); !bytes.Equal(one, want) || (oneErr == nil) != (wantErr == nil) {
			t.Fatalf("whole: %q, %v; a byte at a time: %q, %v", want, wantErr, one, oneErr)
		}
		got, elems, err := rs.Read(nil, nil)
		if wantErr != nil {
			if err == nil {
				t.Fatalf("small limits read %q where large ones fail: %v", got, wantErr)
			}
			return
		}
		if errors.Is(err, ErrReplyTooLarge) || errors.Is(err, ErrReplyTooDeep) || errors.Is(err, ErrNoRoom) {
			continue // dropped whole: the next replies must still match
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("small limits: %q, %v; large: %q", got, err, want)
		}
		checkElems(t, got, elems)
	}
	t.Fatal("more replies than bytes")
}

// checkElems checks that the spans of an array reply tile it after its
// header, and that a reply that is not an array has none.
func checkElems(t *testing.T, reply []byte, elems []Span) {
	t.Helper()
	if !aggregate(reply[0]) {
		if len(elems) != 0 {
			t.Fatalf("%q is not an array but has spans %v", reply, elems)
		}
		return
	}
	at := bytes.Index(reply, []byte("\r\n")) + 2
	for _, sp := range elems {
		if sp.Start != at || sp.End <= sp.Start || sp.End > len(reply) {
			t.Fatalf("span %v of %q does not follow %d", sp, reply, at)
		}
		at = sp.End
	}
	if at != len(reply) {
		t.Fatalf("spans %v of %q end at %d", elems, reply, at)
	}
}
