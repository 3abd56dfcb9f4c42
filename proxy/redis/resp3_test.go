package redis

import (
	"bytes"
	"strings"
	"testing"
)

func TestAppendByProto(t *testing.T) {
	tests := []struct {
		name       string
		got        func(Proto) []byte
		two, three string
	}{
		{"null", func(p Proto) []byte { return AppendNull(nil, p) }, "$-1\r\n", "_\r\n"},
		{"null array", func(p Proto) []byte { return AppendNullArray(nil, p) }, "*-1\r\n", "_\r\n"},
		{"map", func(p Proto) []byte { return AppendMapHeader(nil, 2, p) }, "*4\r\n", "%2\r\n"},
		{"push", func(p Proto) []byte { return AppendPushHeader(nil, 3, p) }, "*3\r\n", ">3\r\n"},
		{"verbatim", func(p Proto) []byte { return AppendVerbatim(nil, "a b\n", p) }, "$4\r\na b\n\r\n", "=8\r\ntxt:a b\n\r\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(tc.got(RESP2)); got != tc.two {
				t.Errorf("RESP2: %q, want %q", got, tc.two)
			}
			got := tc.got(RESP3)
			if string(got) != tc.three {
				t.Errorf("RESP3: %q, want %q", got, tc.three)
			}
			if tc.name == "verbatim" || strings.HasPrefix(tc.name, "null") {
				// A whole reply: a RESP3 reader reads it back.
				back, _, err := NewReplyReader(bytes.NewReader(got), ReplyLimits{RESP3: true}).Read(nil, nil)
				if err != nil || !bytes.Equal(back, got) {
					t.Errorf("read back: %q, %v", back, err)
				}
			}
		})
	}
}

func TestParseHello(t *testing.T) {
	tests := []struct {
		args []string
		want Hello
		err  string
	}{
		{[]string{"HELLO"}, Hello{}, ""},
		{[]string{"HELLO", "3"}, Hello{Proto: RESP3}, ""},
		{[]string{"hello", "2", "setname", "n"}, Hello{Proto: RESP2, SetName: true, Name: []byte("n")}, ""},
		{[]string{"HELLO", "3", "AUTH", "u", "p", "SETNAME", "n"}, Hello{Proto: RESP3, Auth: true, User: []byte("u"), Pass: []byte("p"), SetName: true, Name: []byte("n")}, ""},
		{[]string{"HELLO", "1"}, Hello{}, "-NOPROTO unsupported protocol version\r\n"},
		{[]string{"HELLO", "x"}, Hello{}, "-ERR Protocol version is not an integer or out of range\r\n"},
		{[]string{"HELLO", "3", "AUTH", "u"}, Hello{}, "-ERR Syntax error in HELLO option 'AUTH'\r\n"},
		{[]string{"HELLO", "3", "SETNAME"}, Hello{}, "-ERR Syntax error in HELLO option 'SETNAME'\r\n"},
		{[]string{"HELLO", "3", "x"}, Hello{}, "-ERR Syntax error in HELLO option 'x'\r\n"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			req := &Request{}
			for _, a := range tc.args {
				req.Args = append(req.Args, []byte(a))
			}
			h, bad := ParseHello(req)
			if string(bad) != tc.err {
				t.Fatalf("error %q, want %q", bad, tc.err)
			}
			if bad == nil && (h.Proto != tc.want.Proto || h.Auth != tc.want.Auth || h.SetName != tc.want.SetName ||
				!bytes.Equal(h.User, tc.want.User) || !bytes.Equal(h.Pass, tc.want.Pass) || !bytes.Equal(h.Name, tc.want.Name)) {
				t.Errorf("%+v, want %+v", h, tc.want)
			}
		})
	}
}

// FuzzParseHello: any HELLO arguments parse or get an error reply, never
// a panic; a parse keeps only what the arguments held.
func FuzzParseHello(f *testing.F) {
	f.Add([]byte("3\x00AUTH\x00u\x00p\x00SETNAME\x00n")) // arguments split by NUL
	f.Add([]byte("2"))
	f.Add([]byte("3\x00AUTH"))
	f.Fuzz(func(t *testing.T, in []byte) {
		req := &Request{Args: [][]byte{[]byte("HELLO")}}
		if len(in) > 0 {
			req.Args = append(req.Args, bytes.Split(in, []byte{0})...)
		}
		h, bad := ParseHello(req)
		if bad != nil {
			if bad[0] != '-' || !bytes.HasSuffix(bad, []byte("\r\n")) {
				t.Fatalf("error reply %q", bad)
			}
			return
		}
		if h.Proto != 0 && h.Proto != RESP2 && h.Proto != RESP3 {
			t.Fatalf("version %d", h.Proto)
		}
		if h.Auth && !bytes.Contains(in, h.Pass) {
			t.Fatalf("a password %q not among the arguments", h.Pass)
		}
	})
}
