//go:build !purego

package gomemcache_test

import (
	"testing"

	"github.com/kolco-dev/kolco/adapter/gomemcache"
	"github.com/kolco-dev/kolco/adapter/shards"
)

// TestPickServerDoesNotAllocate checks the lookup gomemcache makes per
// request, with and without a hash tag, for a kolco algorithm and for
// twemproxy's ketama.
func TestPickServerDoesNotAllocate(t *testing.T) {
	for _, cfg := range []shards.Config{{HashTag: "{}"}, {Distribution: "maglev"}, {Distribution: "ketama"}} {
		sel, err := gomemcache.New(cfg, benchNodes(10)...)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"user:{42}:name", "session:7"} {
			if n := testing.AllocsPerRun(1000, func() { sinkAddr, _ = sel.PickServer(key) }); n != 0 {
				t.Errorf("%+v, %q: %v allocations per PickServer", cfg, key, n)
			}
		}
	}
}
