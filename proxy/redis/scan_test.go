package redis

import (
	"strings"
	"testing"
)

// TestParseScan: SCAN's reply gives its cursor and keys; anything else is
// refused.
func TestParseScan(t *testing.T) {
	cursor, keys, err := ParseScan([]byte("*2\r\n$2\r\n17\r\n*3\r\n$1\r\na\r\n$0\r\n\r\n$4\r\nb\r\nc\r\n"))
	if err != nil || string(cursor) != "17" || len(keys) != 3 || string(keys[0]) != "a" || string(keys[1]) != "" || string(keys[2]) != "b\r\nc" {
		t.Fatalf("%q %q %v", cursor, keys, err)
	}
	for _, bad := range []string{"", "+OK\r\n", "*1\r\n$1\r\n0\r\n", "*2\r\n$1\r\n0\r\n*1\r\n", "*2\r\n$1\r\n0\r\n*1\r\n$5\r\nab\r\n",
		"*2\r\n$1\r\n0\r\n*0\r\nx", "*2\r\n:0\r\n*0\r\n", "*2\r\n$1\r\n0\r\n*-1\r\n", "*2\r\n$1\r\n0\r\n*99999999999\r\n"} {
		if _, _, err := ParseScan([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// FuzzParseScan: any reply is parsed or refused, never a panic, and what
// parses gives keys within the reply.
func FuzzParseScan(f *testing.F) {
	f.Add([]byte("*2\r\n$1\r\n0\r\n*1\r\n$1\r\nk\r\n"))
	f.Add([]byte("*2\r\n$1\r\n0\r\n*0\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, keys, err := ParseScan(b)
		if err != nil {
			return
		}
		total := 0
		for _, k := range keys {
			total += len(k)
		}
		if total > len(b) || strings.Count(string(b), "$") < len(keys)+1 {
			t.Fatalf("%d keys of %d bytes from %d bytes", len(keys), total, len(b))
		}
	})
}
