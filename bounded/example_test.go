package bounded_test

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/bounded"
)

// A hot key fills its node up to the capacity and then spills over.
func ExampleRing_Acquire() {
	r, _ := bounded.New([]kolco.Node{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}}, bounded.Config{})
	var leases []bounded.Lease
	for range 40 {
		l, _ := r.Acquire("hot")
		leases = append(leases, l)
	}
	c, _ := r.Capacity("a", r.InFlight())
	most := int64(0)
	for _, load := range r.Loads() {
		most = max(most, load)
	}
	fmt.Println(r.InFlight(), c, most)
	for _, l := range leases {
		l.Release()
	}
	fmt.Println(r.InFlight())
	// Output:
	// 40 13 13
	// 0
}
