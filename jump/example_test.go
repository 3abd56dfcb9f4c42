package jump_test

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/jump"
)

// The published values of Guava's consistentHash(key, 100) for keys 1..5.
func ExampleBucket() {
	for key := uint64(1); key <= 5; key++ {
		fmt.Print(jump.Bucket(key, 100), " ")
	}
	fmt.Println()
	// Output: 55 62 8 45 59
}

// Any node can leave; only its keys move, and adding it back restores them.
func ExamplePlacement_Remove() {
	j, err := jump.New([]kolco.Node{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}}, jump.Config{})
	if err != nil {
		panic(err)
	}
	before, _ := j.Locate("user:42")
	other := "b"
	if before.ID == "b" {
		other = "c"
	}
	_ = j.Remove(other)
	after, _ := j.Locate("user:42")
	fmt.Println(before.ID == after.ID)
	fmt.Println(j.Buckets())
	// Output:
	// true
	// 4 3
}
