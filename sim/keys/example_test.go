package keys_test

import (
	"fmt"
	"strings"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/ring"
	"github.com/kolco-dev/kolco/sim/keys"
)

// Which keys a ring moves when an eleventh node joins ten: about 1/11 of
// them (9.1%; here 8.9%, the new node's arcs being a little short of its
// share), every one onto the new node.
func ExampleCompare() {
	var nodes []kolco.Node
	for i := range 10 {
		nodes = append(nodes, kolco.Node{ID: fmt.Sprintf("node-%d", i)})
	}
	ks := keys.Synthetic(100_000)
	r, err := ring.New(nodes, ring.Config{VNodes: 1000})
	if err != nil {
		fmt.Println(err)
		return
	}
	before, err := keys.Assign(r, ks)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := r.Add(kolco.Node{ID: "node-10"}); err != nil {
		fmt.Println(err)
		return
	}
	after, err := keys.Assign(r, ks)
	if err != nil {
		fmt.Println(err)
		return
	}
	d := keys.Compare(before, after, ks)
	receivers := map[string]bool{}
	for _, e := range d.Edges {
		receivers[d.To[e.To].ID] = true
	}
	fmt.Printf("%.1f%% of the keys moved, from %d donors to %v\n", 100*float64(d.Moved)/float64(ks.Len()), len(d.Edges), receivers)
	// Output:
	// 8.9% of the keys moved, from 10 donors to map[node-10:true]
}

// A key file gives each key a size and a request rate; lines without them
// count one byte and one request.
func ExampleParse() {
	ks, err := keys.Parse(strings.NewReader(`# key size rate
user:1 4KB 10
user:2 1.5MiB
user:3
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range ks.Len() {
		fmt.Println(ks.Key(i), ks.Size(i), ks.Rate(i))
	}
	fmt.Println(ks.TotalSize(), ks.TotalRate())
	_, err = keys.Parse(strings.NewReader("user:1 4KB\nuser:2 lots\n"))
	fmt.Println(err)
	// Output:
	// user:1 4000 10
	// user:2 1.572864e+06 1
	// user:3 1 1
	// 1.576865e+06 12
	// keys: bad key file: line 2: size "lots" is not a byte count such as 512, 4KB or 1.5GiB
}
