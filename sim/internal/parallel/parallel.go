// Package parallel splits work over [0, n) into one range per core, for
// the simulator's passes over millions of keys.
package parallel

import (
	"runtime"
	"sync"
)

// minChunked is the size below which one goroutine does the whole pass:
// under it, starting goroutines costs more than it saves.
const minChunked = 4096

// Chunks splits [0, n) into one range per core (at least one range, a
// single one when n is small).
func Chunks(n int) [][2]int {
	workers := runtime.GOMAXPROCS(0)
	if n < minChunked {
		workers = 1
	}
	size := (n + workers - 1) / max(workers, 1)
	var out [][2]int
	for lo := 0; lo < n; lo += size {
		out = append(out, [2]int{lo, min(lo+size, n)})
	}
	if len(out) == 0 {
		out = append(out, [2]int{0, 0})
	}
	return out
}

// For calls f on each range of [Chunks](n), each on its own goroutine,
// and waits for all of them.
func For(n int, f func(lo, hi int)) {
	var wg sync.WaitGroup
	for _, r := range Chunks(n) {
		wg.Go(func() { f(r[0], r[1]) })
	}
	wg.Wait()
}
