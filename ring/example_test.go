package ring_test

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/ring"
)

// A ring with three caches: each key has one owner, a preference list of
// replicas on distinct nodes, and moves only when its owner leaves.
func Example() {
	r, err := ring.New([]kolco.Node{
		{ID: "cache-a"},
		{ID: "cache-b"},
		{ID: "cache-c", Weight: 2}, // twice the capacity, twice the keys
	}, ring.Config{})
	if err != nil {
		panic(err)
	}

	owner, _ := r.Locate("user:42")
	fmt.Println("owner:", owner.ID)

	replicas, _ := r.LocateN(nil, "user:42", 2)
	fmt.Println("replicas:", replicas[0].ID, replicas[1].ID)

	_ = r.Remove(owner.ID)
	owner, _ = r.Locate("user:42")
	fmt.Println("after removal:", owner.ID)
	// Output:
	// owner: cache-b
	// replicas: cache-b cache-c
	// after removal: cache-c
}

// ArticleConfig reproduces the article's Python ring key for key.
func ExampleArticleConfig() {
	r, _ := ring.New([]kolco.Node{{ID: "cache-a"}, {ID: "cache-b"}, {ID: "cache-c"}}, ring.ArticleConfig())
	owners, _ := r.LocateN(nil, "user:42", 2)
	fmt.Println(owners[0].ID, owners[1].ID)
	// Output: cache-a cache-b
}

// A proxy keeps one connection per server in the order of Nodes, and
// LocateIndex answers with that position: the key is hashed once and no
// map is consulted.
func ExampleRing_LocateIndex() {
	r, _ := ring.New([]kolco.Node{
		{ID: "cache-b", Addr: "10.0.0.2:11211"},
		{ID: "cache-a", Addr: "10.0.0.1:11211"},
	}, ring.Config{})
	var conns []string // one per node, in the order of Nodes (by ID)
	for _, n := range r.Nodes() {
		conns = append(conns, "conn to "+n.Addr)
	}
	i, _ := r.LocateIndex("user:42")
	owner, _ := r.Locate("user:42")
	fmt.Println(owner.ID, "->", conns[i])
	// Output: cache-b -> conn to 10.0.0.2:11211
}
