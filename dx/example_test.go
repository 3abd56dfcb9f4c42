package dx_test

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/dx"
)

// A node of weight 2 gets about twice the keys of a node of weight 1.
func ExampleNew() {
	p, err := dx.New([]kolco.Node{{ID: "a"}, {ID: "b"}, {ID: "c", Weight: 2}}, dx.Config{})
	if err != nil {
		panic(err)
	}
	count := map[string]int{}
	for i := range 10000 {
		n, _ := p.Locate(fmt.Sprint("user:", i))
		count[n.ID]++
	}
	fmt.Println(p.Capacity(), count["c"] > count["a"]*3/2, count["c"] > count["b"]*3/2)
	// Output: 16 true true
}
