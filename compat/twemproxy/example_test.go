package twemproxy_test

import (
	"fmt"

	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// A pool as nutcracker.yml describes it: the servers' lines and the pool's
// hash, hash_tag and distribution.
func Example() {
	var servers []twemproxy.Server
	for _, line := range []string{
		"10.0.0.1:11211:1 cache-a",
		"10.0.0.2:11211:1 cache-b",
		"10.0.0.3:11211:2 cache-c",
	} {
		s, err := twemproxy.ParseServer(line)
		if err != nil {
			panic(err)
		}
		servers = append(servers, s)
	}
	pool, err := twemproxy.New(twemproxy.Config{Hash: "fnv1a_64", HashTag: "{}", Distribution: "ketama"}, servers)
	if err != nil {
		panic(err)
	}
	a, _ := pool.Locate("user:{42}:name")
	b, _ := pool.Locate("user:{42}:email")
	fmt.Println(a.ID == b.ID) // same hash tag, same server
	fmt.Println(servers[pool.Index([]byte("user:{42}:name"))].Name == a.ID)
	// Output:
	// true
	// true
}

// The name a server is hashed under: its name, else the host on port
// 11211, else host:port.
func ExampleServer_RingName() {
	for _, line := range []string{"10.0.0.1:11211:1", "10.0.0.1:22122:1", "10.0.0.1:22122:1 shard-7"} {
		s, _ := twemproxy.ParseServer(line)
		fmt.Println(s.RingName())
	}
	// Output:
	// 10.0.0.1
	// 10.0.0.1:22122
	// shard-7
}
