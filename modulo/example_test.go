package modulo_test

import (
	"fmt"

	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/modulo"
)

// Adding an eleventh node to hash mod N moves most keys: the cost that
// consistent hashing removes.
func Example_disruption() {
	keys := kolcotest.Keys(10000)
	ten, _ := modulo.New(kolcotest.Nodes(10), modulo.Config{})
	eleven, _ := modulo.New(kolcotest.Nodes(11), modulo.Config{})
	moved := 0
	for _, k := range keys {
		a, _ := ten.Locate(k)
		b, _ := eleven.Locate(k)
		if a.ID != b.ID {
			moved++
		}
	}
	fmt.Printf("%.0f%% of keys moved\n", 100*float64(moved)/float64(len(keys)))
	// Output: 91% of keys moved
}
