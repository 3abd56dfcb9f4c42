package rendezvous_test

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/rendezvous"
)

// The article's rendezvous - the node with the largest md5 of
// "node:key" - as a placement.
func Example_article() {
	nodes := []kolco.Node{{ID: "cache-a"}, {ID: "cache-b"}, {ID: "cache-c"}}
	r, err := rendezvous.New(nodes, rendezvous.Config{Hash: keyhash.MD5, Separator: ":"})
	if err != nil {
		panic(err)
	}
	owner, _ := r.Locate("user:42")
	fmt.Println(owner.ID)

	// The second choice takes over when the owner leaves.
	owners, _ := r.LocateN(nil, "user:42", 2)
	_ = r.Remove(owners[0].ID)
	next, _ := r.Locate("user:42")
	fmt.Println(owners[1].ID == next.ID)
	// Output:
	// cache-b
	// true
}
