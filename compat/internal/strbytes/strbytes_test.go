package strbytes

import "testing"

func TestOf(t *testing.T) {
	for _, s := range []string{"", "a", "key\x80\xff", string(make([]byte, 300))} {
		if got := string(Of(s)); got != s {
			t.Errorf("Of(%q) = %q", s, got)
		}
		if got := String([]byte(s)); got != s {
			t.Errorf("String(%q) = %q", s, got)
		}
	}
}
