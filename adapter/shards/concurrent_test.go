package shards_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/shards"
)

// TestLookupsDuringUpdates looks keys up while another goroutine changes
// the nodes back and forth, and checks that every answer is the value of a
// node of the very table that gave it: a table never mixes two versions.
// Run with -race, it also checks that lookups and changes share no
// unguarded memory.
func TestLookupsDuringUpdates(t *testing.T) {
	value := func(n kolco.Node) (string, error) { return n.ID + "@" + n.Addr, nil }
	small, large := nodes("a", "b", "c"), nodes("a", "b", "c", "d", "e")
	l, err := shards.New(shards.Config{Distribution: "jump"}, large, value)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := range 2 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				table := l.Table()
				key := fmt.Sprintf("r%d:%d", r, i)
				got, err := table.Lookup(key)
				j, _ := table.Index(key)
				if want, _ := value(table.Node(j)); err != nil || got != want {
					t.Errorf("%q: %q, %v from a table whose node %d is %v", key, got, err, j, table.Node(j))
					return
				}
			}
		})
	}
	for i := range 200 {
		next := small
		if i%2 == 1 {
			next = large
		}
		if err := l.Update(next); err != nil {
			t.Error(err)
			break
		}
	}
	close(stop)
	wg.Wait()
}
