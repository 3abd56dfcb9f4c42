//go:build !purego

package libmemcached_test

import (
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/libmemcached"
)

// The purego twin copies the key in Locate, so the zero-allocation promise
// is checked only for the default build.
func TestNoAllocs(t *testing.T) {
	for _, d := range []string{"modula", "ketama", "ketama_weighted", "ketama_spy"} {
		t.Run(d, func(t *testing.T) {
			p := mustNew(t, libmemcached.Config{Distribution: d}, hosts(1, 2, 3, 4, 5))
			key := []byte("user:1234:profile")
			dst := make([]kolco.Node, 0, 5)
			if n := testing.AllocsPerRun(200, func() { sink += p.Index(key) }); n != 0 {
				t.Errorf("Index allocates %v", n)
			}
			if n := testing.AllocsPerRun(200, func() { nd, _ := p.Locate("user:1234:profile"); sink += len(nd.ID) }); n != 0 {
				t.Errorf("Locate allocates %v", n)
			}
			if n := testing.AllocsPerRun(200, func() { r, _ := p.LocateN(dst[:0], "k", 4); sink += len(r) }); n != 0 {
				t.Errorf("LocateN allocates %v", n)
			}
		})
	}
}
