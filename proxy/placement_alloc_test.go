//go:build !purego

package proxy

import (
	"testing"

	"github.com/kolco-dev/kolco/compat/twemproxy"
)

func TestKolcoPlacementDoesNotAllocate(t *testing.T) {
	servers := []twemproxy.Server{{Host: "127.0.0.1", Port: 11211, Weight: 1}, {Host: "127.0.0.1", Port: 11212, Weight: 1}}
	for _, dist := range []string{"ring", "rendezvous", "maglev", "jump"} {
		p, err := newPicker(&PoolConfig{Distribution: dist}, servers)
		if err != nil {
			t.Fatal(err)
		}
		key := []byte("user:12345")
		if n := testing.AllocsPerRun(100, func() { _ = p.Index(key) }); n != 0 {
			t.Errorf("%s: %v allocations per lookup", dist, n)
		}
	}
}
