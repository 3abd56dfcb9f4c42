package nodefile_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/nodefile"
)

func TestParse(t *testing.T) {
	in := "# cache tier\n10.0.0.1:11211\n\ncache-b 2\n  cache-c\t0.5\teu-1  \r\nnb\u00a0sp\n"
	got, err := nodefile.Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []kolco.Node{{ID: "10.0.0.1:11211"}, {ID: "cache-b", Weight: 2}, {ID: "cache-c", Weight: 0.5, Zone: "eu-1"}, {ID: "nb\u00a0sp"}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("node %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		name, in, line string
		also           error
	}{
		{"too many fields", "a 1 z extra\n", "line 1", nil},
		{"bad weight", "a\nb heavy\n", "line 2", nil},
		{"zero weight", "a 0\n", "line 1", kolco.ErrBadWeight},
		{"negative weight", "a -1\n", "line 1", kolco.ErrBadWeight},
		{"NaN weight", "a NaN\n", "line 1", kolco.ErrBadWeight},
		{"infinite weight", "a +Inf\n", "line 1", kolco.ErrBadWeight},
		{"duplicate", "a\n# c\nb\na\n", "line 4", kolco.ErrDuplicateNode},
		{"comma for a space", "cache-a,1\n", `"cache-a 1"`, nil},
		{"comma in an ID", "a 1\nb,c 2 z1\n", "line 2", nil},
		{"list on one line", "a, b, c\n", `"a", "b", "c"`, nil},
		{"list without spaces", "x\na,b\n", `"a", "b"`, nil},
		{"four in a list", "a, b, c, d\n", "one per line", nil},
		{"commas for spaces", "cache-a, 2, eu-1\n", `"cache-a 2 eu-1"`, nil},
		{"line too long", strings.Repeat("x", 70000), "longer than", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			nodes, err := nodefile.Parse(strings.NewReader(c.in))
			if !errors.Is(err, nodefile.ErrBadList) || (c.also != nil && !errors.Is(err, c.also)) {
				t.Fatalf("error %v, want ErrBadList (and %v)", err, c.also)
			}
			if !strings.Contains(err.Error(), c.line) {
				t.Errorf("error %q does not name %q", err, c.line)
			}
			if nodes != nil {
				t.Errorf("returned %d nodes with the error", len(nodes))
			}
		})
	}
}

// FuzzParse checks that any input either parses into valid, distinct nodes
// or fails with ErrBadList, and never panics.
func FuzzParse(f *testing.F) {
	f.Add("a\nb 2\nc 0.5 z1\n")
	f.Add("# comment only\n\n")
	f.Add("host:11211 1e308 zone\nhost:11211\n")
	f.Add("\x00 \xff\n a  b  c  d")
	f.Fuzz(func(t *testing.T, in string) {
		nodes, err := nodefile.Parse(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, nodefile.ErrBadList) {
				t.Fatalf("error %v does not wrap ErrBadList", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, n := range nodes {
			if err := n.Validate(); err != nil {
				t.Fatalf("parsed invalid node %+v: %v", n, err)
			}
			if seen[n.ID] || strings.ContainsAny(n.ID, " \t\n,") || (utf8.ValidString(in) && !utf8.ValidString(n.ID)) {
				t.Fatalf("bad ID %q", n.ID)
			}
			seen[n.ID] = true
		}
	})
}
