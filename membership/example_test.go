package membership_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kolco-dev/kolco/membership"
)

// A program follows a node file: the first version is the file as it is,
// each later one a settled change.
func ExampleWatch() {
	dir, _ := os.MkdirTemp("", "kolco")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "nodes.txt")
	os.WriteFile(path, []byte("cache-a\ncache-b 2 eu-1\n"), 0o644)

	w := membership.Watch(context.Background(), &membership.File{Path: path})
	defer w.Close()
	v := <-w.Versions()
	fmt.Println(v)
	for _, n := range v.Nodes {
		fmt.Printf("%s weight %v zone %q\n", n.ID, n.EffectiveWeight(), n.Zone)
	}
	// Output:
	// revision 1: cache-a, cache-b
	// cache-a weight 1 zone ""
	// cache-b weight 2 zone "eu-1"
}

// One pool of a twemproxy configuration, named as the proxy names its
// servers.
func ExampleParseNutcracker() {
	nodes, err := membership.ParseNutcracker([]byte(`
alpha:
  listen: 127.0.0.1:22121
  servers:
   - 10.0.0.1:11211:1 cache-a
   - 10.0.0.2:11211:2
`), "alpha")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range nodes {
		fmt.Printf("%s at %s, weight %v\n", n.ID, n.Addr, n.Weight)
	}
	// Output:
	// cache-a at 10.0.0.1:11211, weight 1
	// 10.0.0.2 at 10.0.0.2:11211, weight 2
}
