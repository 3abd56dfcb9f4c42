package proxy

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/kolco-dev/kolco/sim/trace"
)

// FuzzTrafficSample feeds the sample what clients and servers send: any
// key is traced and read back from the trace file as it was, and the
// readers of a reply's value size neither panic nor misread a number.
func FuzzTrafficSample(f *testing.F) {
	for _, seed := range []string{
		"user:42",                  // a plain key
		"a b%c\x00\xff",            // bytes the format percent-encodes
		"",                         // the empty key
		"VALUE k 0 5\r\nhello\r\n", // a get's VALUE entry
		"$5\r\nhello\r\n",          // a Redis bulk string
		"$-1\r\n",                  // a Redis null
		"99999999999999999999",     // a number past int64
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := newTrafficSample(&PoolConfig{Traffic: Traffic{Enabled: true, Requests: 4, TopKeys: 2}})
		s.record(1e9, b, int64(len(b)), "get", trace.Read, trace.Hit)
		var file bytes.Buffer
		w := trace.NewWriter(&file)
		for _, r := range s.requests() {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		rd, err := trace.Open(&file, trace.Kolco)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := rd.Next(); err != nil || got.Key != string(b) {
			t.Fatalf("read back %q, %v; want %q", got.Key, err, b)
		}
		if n := valueSize(b); n < -1 {
			t.Fatalf("valueSize %d", n)
		}
		_, _ = bulkResult(b)
		digits := 0
		for digits < len(b) && digits < 18 && b[digits] >= '0' && b[digits] <= '9' {
			digits++
		}
		want := int64(-1)
		if digits > 0 {
			want, _ = strconv.ParseInt(string(b[:digits]), 10, 64)
		}
		if got := leadingNumber(b); got != want {
			t.Fatalf("leadingNumber(%q) = %d, want %d", b, got, want)
		}
	})
}
