package kolcotest

import (
	"sync"
	"testing"

	"github.com/kolco-dev/kolco"
)

// ConcurrentReaders checks that lookups of p from several goroutines agree
// with a sequential run and, under -race, that they share no mutable state.
// It is for immutable placements, such as other systems' pools, that Run's
// membership checks do not reach.
func ConcurrentReaders(t *testing.T, p kolco.Placement) {
	t.Helper()
	keys := Keys(500)
	want := make([]string, len(keys))
	for i, k := range keys {
		n, err := p.Locate(k)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = n.ID
	}
	var wg sync.WaitGroup
	bad := make(chan string, 4)
	for range 4 {
		wg.Go(func() {
			for i, k := range keys {
				if n, err := p.Locate(k); err != nil || n.ID != want[i] {
					bad <- k
					return
				}
			}
		})
	}
	wg.Wait()
	close(bad)
	for k := range bad {
		t.Errorf("concurrent Locate(%q) disagrees with the sequential run", k)
	}
}
