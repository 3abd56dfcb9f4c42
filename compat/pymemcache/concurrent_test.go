package pymemcache_test

import (
	"testing"

	"github.com/kolco-dev/kolco/compat/pymemcache"
	"github.com/kolco-dev/kolco/kolcotest"
)

func TestConcurrentReaders(t *testing.T) {
	p, err := pymemcache.New([]string{"a:1", "b:1", "c:1"})
	if err != nil {
		t.Fatal(err)
	}
	kolcotest.ConcurrentReaders(t, p)
}
