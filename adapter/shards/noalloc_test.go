//go:build !purego

package shards_test

import (
	"testing"

	"github.com/kolco-dev/kolco/adapter/shards"
)

// TestLookupDoesNotAllocate checks every kind of table: a kolco algorithm
// (LocateIndex), twemproxy's ketama, each with a hash tag.
func TestLookupDoesNotAllocate(t *testing.T) {
	for _, cfg := range []shards.Config{{HashTag: "{}"}, {Distribution: "jump"}, {Distribution: "ketama", HashTag: "{}"}} {
		l, err := shards.New(cfg, nodes("a", "b", "c"), (&addrs{}).value)
		if err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(1000, func() { _, _ = l.Table().Lookup("user:{42}:name") }); n != 0 {
			t.Errorf("%+v: %v allocations per lookup", cfg, n)
		}
	}
}
