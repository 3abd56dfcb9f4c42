package multiprobe_test

import (
	"fmt"

	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/multiprobe"
)

// One point per node and 21 probes per key keep the load even without
// virtual nodes.
func ExampleNew() {
	m, err := multiprobe.New(kolcotest.Nodes(10), multiprobe.Config{})
	if err != nil {
		panic(err)
	}
	load := map[string]int{}
	for _, k := range kolcotest.Keys(100000) {
		n, _ := m.Locate(k)
		load[n.ID]++
	}
	most := 0
	for _, c := range load {
		most = max(most, c)
	}
	fmt.Printf("busiest node: %.2f times the mean\n", float64(most)/10000)
	// Output: busiest node: 1.02 times the mean
}
