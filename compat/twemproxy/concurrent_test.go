package twemproxy_test

import (
	"testing"

	"github.com/kolco-dev/kolco/compat/twemproxy"
	"github.com/kolco-dev/kolco/kolcotest"
)

func TestConcurrentReaders(t *testing.T) {
	kolcotest.ConcurrentReaders(t, mustNew(t, twemproxy.Config{}, servers(1, 2, 3)))
}
