package mrc_test

import (
	"fmt"

	"github.com/kolco-dev/kolco/sim/mrc"
)

// An item of an 11-byte key and a 100-byte value takes 170 bytes in
// memcached, in a 192-byte slab chunk; a 1 MiB page holds 5 461 of them.
func ExampleMemcachedFootprint() {
	f := mrc.MemcachedFootprint(len("key:0000001"), 100)
	fmt.Printf("%.4f bytes, %.0f a MiB\n", f, (1<<20)/f)
	// Output:
	// 192.0117 bytes, 5461 a MiB
}

// A loop over three keys, read ten times: a cache of two items misses
// every read, whichever policy, as the key it evicts is always the next
// one read; a cache of three misses only the first three reads.
func ExampleCurve() {
	var refs []mrc.Ref
	for i := range 30 {
		refs = append(refs, mrc.Ref{Key: int32(i % 3), Op: mrc.Get, Size: 100})
	}
	for _, p := range []mrc.Policy{mrc.LRU, mrc.Memcached} {
		miss, err := mrc.Curve(mrc.Stream{Refs: refs, Rate: 1, FillOnMiss: true}, p, []float64{200, 300})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %.2f at 200 bytes, %.2f at 300\n", p, miss[0], miss[1])
	}
	// Output:
	// lru: 1.00 at 200 bytes, 0.10 at 300
	// memcached: 1.00 at 200 bytes, 0.10 at 300
}
