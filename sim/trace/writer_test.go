package trace_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/sim/trace"
)

// TestWriterComment: comments follow the header, a line of text each,
// and readers skip them.
func TestWriterComment(t *testing.T) {
	var b bytes.Buffer
	w := trace.NewWriter(&b)
	if err := w.Comment("from pool a\nthe latest 1 request"); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(trace.Request{Time: 1e9, Key: "k", Size: 3, Command: "get", Result: trace.Hit}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "#kolco-trace v1\n# time key size command result\n# from pool a\n# the latest 1 request\n1.000000000 k 3 get hit\n"
	if b.String() != want {
		t.Fatalf("wrote %q, want %q", b.String(), want)
	}
	r, err := trace.Open(strings.NewReader(b.String()), trace.Auto)
	if err != nil {
		t.Fatal(err)
	}
	if req, err := r.Next(); err != nil || req.Key != "k" {
		t.Fatalf("read %+v, %v", req, err)
	}
}

// TestSampleHashBytes: a key's sampling hash is the same held in bytes.
func TestSampleHashBytes(t *testing.T) {
	for _, k := range []string{"", "a", "user:42", strings.Repeat("x", 300)} {
		if trace.SampleHash(k) != trace.SampleHashBytes([]byte(k)) {
			t.Errorf("%q: the hashes differ", k)
		}
	}
}

// TestOpOf: a command's name tells what it does to its keys.
func TestOpOf(t *testing.T) {
	for name, want := range map[string]trace.Op{"get": trace.Read, "mg": trace.Read, "hget": trace.Read, "set": trace.Write,
		"incr": trace.Write, "del": trace.Delete, "md": trace.Delete, "expire": trace.Other, "nosuch": trace.Other} {
		if got := trace.OpOf(name); got != want {
			t.Errorf("OpOf(%q) = %v, want %v", name, got, want)
		}
	}
}
