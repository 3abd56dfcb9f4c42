package suggest

import "testing"

func TestNearest(t *testing.T) {
	names := []string{"listen", "hash", "distribution", "server_retry_timeout", "timeout", "redis", "store"}
	for _, c := range []struct{ typed, want string }{
		{"listen", "listen"},
		{"lisen", "listen"},
		{"lsiten", "listen"},        // a swap is one edit
		{"distrib", "distribution"}, // a prefix
		{"Hash", "hash"},            // case
		{"timeot", "timeout"},
		{"stroe", "store"},
		{"nothing_like_it", ""},
		{"", ""},
		{"x", ""},
	} {
		if got := Nearest(c.typed, names); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.typed, got, c.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"abc", "abc", 0}, {"ключ", "клюк", 1},
	} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
