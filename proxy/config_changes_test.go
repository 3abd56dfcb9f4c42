package proxy

import (
	"strings"
	"testing"
)

// TestExplainChanges: --check says how a pool applies a change and which
// servers it sweeps, naming them, or every server for "*".
func TestExplainChanges(t *testing.T) {
	for _, c := range []struct {
		extra string
		want  []string
	}{
		{"", []string{"changes: cold:", "sweep: none"}},
		{"  distribution: ring\n  warm: {window: 5000, depth: 3, quiet: 7}\n  sweep: {exclusive: [a, \"127.0.0.1:11212\"], rate: 50}\n",
			[]string{"changes: warm: for up to 5000 ms (or until 7 fallbacks", "through up to 3 previous placements",
				"the copies on servers a, 127.0.0.1:11212 that they no longer own", "at most 50 a second per server"}},
		{"  distribution: ring\n  sweep: {exclusive: [\"*\"]}\n", []string{"the copies on every server that", "at most 1000 a second"}},
	} {
		cfg, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:22121\n  servers: [\"127.0.0.1:11211:1 a\", \"127.0.0.1:11212:1 b\"]\n" + c.extra))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := cfg.Explain(&b); err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%q: --check lacks %q:\n%s", c.extra, w, b.String())
			}
		}
	}
}
