package membership_test

import (
	"errors"
	"testing"

	"github.com/kolco-dev/kolco/membership"
)

// FuzzParseNutcracker checks that any file either gives valid, distinct
// nodes or fails with ErrBadContent, and never panics.
func FuzzParseNutcracker(f *testing.F) {
	f.Add("p:\n  servers:\n   - 127.0.0.1:11211:1 a\n   - 127.0.0.1:11212:2\n", "p")
	f.Add("p:\n  servers: [\"h:1:1\"]\n  zones: {h:1: z}\nkolco: {}\n", "")
	f.Add("p:\n  servers: [\"::1:11211:1\", \"/tmp/s:3 sock\"]\n", "")
	f.Add("a: {servers: [x]}\nb: 1\n", "b")
	f.Add("p: [\n", "p")
	f.Add("&a [*a]", "")
	f.Fuzz(func(t *testing.T, data, pool string) {
		nodes, err := membership.ParseNutcracker([]byte(data), pool)
		if err != nil {
			if !errors.Is(err, membership.ErrBadContent) {
				t.Fatalf("error %v does not wrap ErrBadContent", err)
			}
			return
		}
		membership.SortNodes(nodes)
		if err := (membership.Version{Nodes: nodes}).Validate(); err != nil {
			t.Fatalf("parsed an invalid node set %+v: %v", nodes, err)
		}
		for _, n := range nodes {
			if n.Addr == "" {
				t.Fatalf("node %q without an address", n.ID)
			}
		}
	})
}
