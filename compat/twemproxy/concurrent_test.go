package twemproxy_test

import (
	"strconv"
	"sync"
	"testing"

	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// TestConcurrentReaders checks that lookups from many goroutines agree
// with a sequential run (and, under -race, that they share no mutable state).
func TestConcurrentReaders(t *testing.T) {
	p := newConcurrentPool(t)
	want := make([]string, 500)
	for i := range want {
		n, err := p.Locate("key-" + strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		want[i] = n.ID
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range want {
				if n, err := p.Locate("key-" + strconv.Itoa(i)); err != nil || n.ID != want[i] {
					errs <- "key-" + strconv.Itoa(i)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for k := range errs {
		t.Errorf("concurrent Locate(%q) disagrees with the sequential run", k)
	}
}

func newConcurrentPool(t *testing.T) *twemproxy.Pool {
	return mustNew(t, twemproxy.Config{}, servers(1, 2, 3))
}
