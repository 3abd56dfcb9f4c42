package goredisring_test

import (
	"fmt"

	"github.com/kolco-dev/kolco/compat/goredisring"
)

// Find the shard a go-redis Ring with these Addrs sends keys to; keys with
// one hash tag share a shard. The output is pinned, and TestAgainstGoRedisRing
// asks go-redis itself about these keys (only shard names are hashed).
func Example() {
	r, err := goredisring.New(map[string]string{
		"shard1": "10.0.0.1:6379",
		"shard2": "10.0.0.2:6379",
		"shard3": "10.0.0.3:6379",
	})
	if err != nil {
		panic(err)
	}
	for _, k := range []string{"{user1000}.following", "{user1000}.followers", "session:1", "session:5"} {
		n, _ := r.Locate(k)
		fmt.Println(k, n.ID)
	}
	// Output:
	// {user1000}.following shard1
	// {user1000}.followers shard1
	// session:1 shard2
	// session:5 shard3
}
