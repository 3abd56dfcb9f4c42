package libmemcached_test

import (
	"testing"

	"github.com/kolco-dev/kolco/compat/libmemcached"
	"github.com/kolco-dev/kolco/kolcotest"
)

func TestConcurrentReaders(t *testing.T) {
	kolcotest.ConcurrentReaders(t, mustNew(t, libmemcached.Config{Distribution: "ketama"}, hosts(1, 2, 3)))
}
