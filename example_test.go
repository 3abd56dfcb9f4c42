package kolco_test

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/ring"
)

// A reload turns the new server list into one change: Diff lists what
// differs and Apply makes all of it at once, or none of it. A server that
// only changed its address moves no key.
func ExampleDiff() {
	running := []kolco.Node{
		{ID: "cache-a", Addr: "10.0.0.1:11211"},
		{ID: "cache-b", Addr: "10.0.0.2:11211"},
		{ID: "cache-c", Addr: "10.0.0.3:11211"},
	}
	r, _ := ring.New(running, ring.Config{})
	before, _ := r.Locate("user:42")

	reloaded := []kolco.Node{
		{ID: "cache-a", Addr: "10.0.0.1:11211"},
		{ID: "cache-b", Addr: "10.0.0.9:11211"}, // moved to another host
		{ID: "cache-d", Addr: "10.0.0.4:11211"}, // replaces cache-c
	}
	c := kolco.Diff(r.Nodes(), reloaded)
	fmt.Println("remove:", c.Remove)
	for _, n := range c.Add {
		fmt.Println("add:", n.ID)
	}
	for _, n := range c.Update {
		fmt.Println("update:", n.ID, n.Addr)
	}
	if err := r.Apply(c); err != nil {
		panic(err)
	}
	after, _ := r.Locate("user:42")
	fmt.Println(before.ID, before.Addr, "->", after.ID, after.Addr)
	// Output:
	// remove: [cache-c]
	// add: cache-d
	// update: cache-b 10.0.0.9:11211
	// cache-b 10.0.0.2:11211 -> cache-b 10.0.0.9:11211
}

// Two processes that built their rings in different orders, one of them
// with new addresses, compare fingerprints to check that they place every
// key alike; a third that missed a change differs.
func ExampleFingerprint() {
	a, _ := ring.New([]kolco.Node{{ID: "cache-a"}, {ID: "cache-b"}, {ID: "cache-c"}}, ring.Config{})
	b, _ := ring.New([]kolco.Node{{ID: "cache-c", Addr: "10.0.0.3:11211"}, {ID: "cache-a"}}, ring.Config{})
	_ = b.Add(kolco.Node{ID: "cache-b"})
	c, _ := ring.New([]kolco.Node{{ID: "cache-a"}, {ID: "cache-b"}}, ring.Config{})

	fa, _ := kolco.Fingerprint(a)
	fb, _ := kolco.Fingerprint(b)
	fc, _ := kolco.Fingerprint(c)
	fmt.Println(len(fa), fa == fb, fa == fc)
	// Output: 32 true false
}
