package redis

import (
	"strings"
	"testing"
)

func TestAppend(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"array header", AppendArrayHeader(nil, 3), "*3\r\n"},
		{"nil array", AppendArrayHeader(nil, -1), "*-1\r\n"},
		{"bulk", AppendBulk(nil, []byte("a\r\nb")), "$4\r\na\r\nb\r\n"},
		{"empty bulk", AppendBulk(nil, nil), "$0\r\n\r\n"},
		{"bulk string", AppendBulkString(nil, "héllo"), "$6\r\nhéllo\r\n"},
		{"nil", AppendNil(nil), "$-1\r\n"},
		{"int", AppendInt(nil, -12), ":-12\r\n"},
		{"simple", AppendSimpleString(nil, "PONG"), "+PONG\r\n"},
		{"simple with line ends", AppendSimpleString(nil, "a\r\nb"), "+a  b\r\n"},
		{"ok", AppendOK(nil), "+OK\r\n"},
		{"error", AppendError(nil, "ERR bad\nthing"), "-ERR bad thing\r\n"},
		{"args", AppendArgs(nil, [][]byte{[]byte("GET"), []byte("k")}), "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"},
		{"appends", AppendInt([]byte("x"), 1), "x:1\r\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if string(tc.got) != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}

// TestEncodedRepliesReadBack: what the encoders write, the reply reader
// reads back whole, element by element.
func TestEncodedRepliesReadBack(t *testing.T) {
	var b []byte
	b = AppendArrayHeader(b, 5)
	b = AppendBulk(b, []byte("x"))
	b = AppendNil(b)
	b = AppendInt(b, 7)
	b = AppendError(b, "ERR e")
	b = AppendArrayHeader(b, 1)
	b = AppendOK(b)
	got, elems, err := NewReplyReader(strings.NewReader(string(b)), ReplyLimits{}).Read(nil, nil)
	if err != nil || string(got) != string(b) || len(elems) != 5 {
		t.Fatalf("read back %q: %d elements, %v", got, len(elems), err)
	}
}
