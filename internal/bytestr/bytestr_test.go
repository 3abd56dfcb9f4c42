package bytestr

import (
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	for _, s := range []string{"", "a", "key\x80\xff", strings.Repeat("x", 300)} {
		if got := string(Of(s)); got != s {
			t.Errorf("Of(%q) = %q", s, got)
		}
		if got := String([]byte(s)); got != s {
			t.Errorf("String(%q) = %q", s, got)
		}
	}
}

func TestJoin(t *testing.T) {
	var buf [8]byte
	for _, c := range []struct{ prefix, s string }{
		{"", ""}, {"ab", "cd"}, {"node-1", "k"}, {"prefix", "too long for the buffer"},
	} {
		if got := Join(buf[:], c.prefix, c.s); got != c.prefix+c.s {
			t.Errorf("Join(%q, %q) = %q", c.prefix, c.s, got)
		}
	}
}

var sink int

// hashOf is called through a variable, as a keyhash.Func is, so that the
// compiler cannot see that it keeps nothing.
var hashOf = func(s string) int { return len(s) }

// TestJoinDoesNotAllocate checks the promise that a join that fits the
// buffer costs no allocation, even when the result goes through an
// indirect call; the purego twin is allowed its copy.
func TestJoinDoesNotAllocate(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		var buf [64]byte
		sink += hashOf(Join(buf[:], "node-17:", "user:42"))
	})
	if want := 0.0; !Copies && allocs != want {
		t.Errorf("Join allocates %v times per call, want %v", allocs, want)
	}
}
