package gomemcache_test

import (
	"fmt"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/gomemcache"
	"github.com/kolco-dev/kolco/adapter/shards"
)

// A gomemcache client placing keys on a kolco ring; keys sharing a
// {tag} share a server.
func Example() {
	sel, err := gomemcache.New(shards.Config{Distribution: "ring", HashTag: "{}"},
		kolco.Node{ID: "cache-a", Addr: "10.0.0.1:11211"},
		kolco.Node{ID: "cache-b", Addr: "10.0.0.2:11211"},
		kolco.Node{ID: "cache-c", Addr: "10.0.0.3:11211"})
	if err != nil {
		fmt.Println(err)
		return
	}
	mc := memcache.NewFromSelector(sel)
	_ = mc // mc.Set, mc.Get, ... as with any gomemcache client

	for _, key := range []string{"user:{42}:name", "user:{42}:email", "session:1", "session:2", "session:4"} {
		addr, _ := sel.PickServer(key)
		fmt.Println(key, addr)
	}
	// Output:
	// user:{42}:name 10.0.0.2:11211
	// user:{42}:email 10.0.0.2:11211
	// session:1 10.0.0.1:11211
	// session:2 10.0.0.2:11211
	// session:4 10.0.0.3:11211
}

// An app beside a nutcracker pool reads the servers nutcracker writes:
// twemproxy's ketama over the pool's servers, named as nutcracker names
// them.
func Example_twemproxy() {
	sel, err := gomemcache.New(shards.Config{Distribution: "ketama", Hash: "fnv1a_64", HashTag: "{}"},
		kolco.Node{ID: "10.0.0.1", Addr: "10.0.0.1:11211"},
		kolco.Node{ID: "cache-b", Addr: "10.0.0.2:11211", Weight: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, key := range []string{"user:{42}:name", "session:7"} {
		addr, _ := sel.PickServer(key)
		fmt.Println(key, addr)
	}
	// Output:
	// user:{42}:name 10.0.0.2:11211
	// session:7 10.0.0.1:11211
}
