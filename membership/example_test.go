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

// A program places keys on the nodes a file lists, following the file as
// it changes: every lookup reads the current placement without a lock,
// and each change of the file is applied as a change, moving only the keys
// it must. With package membership/etcd's store as the source, every
// process following it places keys alike, and says so by its fingerprint.
func ExampleFollow() {
	dir, _ := os.MkdirTemp("", "kolco")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "nodes.txt")
	os.WriteFile(path, []byte("cache-a\ncache-b\ncache-c\n"), 0o644)

	f, err := membership.Follow(context.Background(), &membership.File{Path: path}, membership.FollowConfig{Algorithm: "jump"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	view, err := f.WaitRevision(context.Background(), 1) // the file read once
	if err != nil {
		fmt.Println(err)
		return
	}
	owner, _ := view.Placement.Locate("user:42")
	fmt.Printf("revision %d: %d nodes; user:42 on %s\n", view.Revision, len(view.Nodes), owner.ID)
	fmt.Println("fingerprint of 32 hex digits:", len(view.Fingerprint) == 32)
	// Output:
	// revision 1: 3 nodes; user:42 on cache-b
	// fingerprint of 32 hex digits: true
}
