//go:build !purego

package pymemcache_test

import (
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/pymemcache"
)

// The purego twin copies the key in Locate, so the zero-allocation promise
// is checked only for the default build.
func TestNoAllocs(t *testing.T) {
	p, err := pymemcache.New([]string{"a:1", "b:1", "c:1", "d:1"})
	if err != nil {
		t.Fatal(err)
	}
	key := []byte("user:1234:é")
	dst := make([]kolco.Node, 0, 4)
	for name, f := range map[string]func(){
		"Index":         func() { sink += p.Index(key) },
		"IndexBytesKey": func() { sink += p.IndexBytesKey(key) },
		"Locate":        func() { n, _ := p.Locate("user:1234:é"); sink += len(n.ID) },
		"LocateN":       func() { r, _ := p.LocateN(dst[:0], "k", 4); sink += len(r) },
	} {
		t.Run(name, func(t *testing.T) {
			if n := testing.AllocsPerRun(200, f); n != 0 {
				t.Errorf("allocates %v", n)
			}
		})
	}
}
