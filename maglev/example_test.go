package maglev_test

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/maglev"
)

// Entries follow the weights 1:3 to within one entry.
func ExampleNew() {
	t, err := maglev.New([]kolco.Node{{ID: "a"}, {ID: "b", Weight: 3}}, maglev.Config{TableSize: 101})
	if err != nil {
		panic(err)
	}
	fmt.Println(t.Entries())
	// Output:
	// map[a:26 b:75]
}
