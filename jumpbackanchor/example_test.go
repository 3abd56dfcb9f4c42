package jumpbackanchor_test

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/jumpbackanchor"
)

// Removing any node moves only its keys; removing the node just added puts
// every key back where it was.
func Example() {
	p, _ := jumpbackanchor.New([]kolco.Node{{ID: "a"}, {ID: "b"}, {ID: "c"}}, jumpbackanchor.Config{})
	owners := func() (out []string) {
		for _, k := range []string{"k1", "k2", "k3", "k4", "k5", "k6"} {
			id, _ := p.LocateID(k)
			out = append(out, id)
		}
		return out
	}
	fmt.Println(owners())
	_ = p.Add(kolco.Node{ID: "d"})
	fmt.Println(owners())
	_ = p.Remove("d")
	fmt.Println(owners())
	_ = p.Remove("a")
	fmt.Println(owners())
	// Output:
	// [a a b a c b]
	// [a a b a d d]
	// [a a b a c b]
	// [b b b c c b]
}
