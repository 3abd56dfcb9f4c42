package ring

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kolco-dev/kolco"
)

// TestEmptyRingAnswersNoNodes looks keys up on rings that are empty, from
// the start or after their last node is removed, with hashes that reach
// every position of the empty ring's one slot: the byte 255 is the one
// its entries cannot answer without a search.
func TestEmptyRingAnswersNoNodes(t *testing.T) {
	hashes := map[string]func(string) uint64{
		"all ones": func(string) uint64 { return ^uint64(0) },
		"top byte 255": func(k string) uint64 {
			return 0xff<<56 | uint64(len(k))
		},
		"zero":    func(string) uint64 { return 0 },
		"default": nil,
	}
	for name, hash := range hashes {
		for _, emptied := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/emptied=%v", name, emptied), func(t *testing.T) {
				var nodes []kolco.Node
				if emptied {
					nodes = []kolco.Node{{ID: "a"}, {ID: "b"}}
				}
				r, err := New(nodes, Config{Hash: hash})
				if err != nil {
					t.Fatal(err)
				}
				if emptied {
					if err := r.Remove("a", "b"); err != nil {
						t.Fatal(err)
					}
				}
				for i := range 2000 {
					key := fmt.Sprintf("key-%d", i)
					if n, err := r.Locate(key); n != nil || !errors.Is(err, kolco.ErrNoNodes) {
						t.Fatalf("Locate(%q) on an empty ring: %v, %v", key, n, err)
					}
					if id, err := r.LocateID(key); id != "" || !errors.Is(err, kolco.ErrNoNodes) {
						t.Fatalf("LocateID(%q) on an empty ring: %q, %v", key, id, err)
					}
					if i, err := r.LocateIndex(key); i != -1 || !errors.Is(err, kolco.ErrNoNodes) {
						t.Fatalf("LocateIndex(%q) on an empty ring: %d, %v", key, i, err)
					}
				}
			})
		}
	}
}
