package goredis_test

import (
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/goredis"
	"github.com/kolco-dev/kolco/adapter/shards"
)

// A go-redis Ring placed by jump. When go-redis's heartbeat marks a shard
// down it asks for a consistent hash over the live shards: only the down
// shard's keys move, to the next shard of their preference list.
func Example() {
	sh, err := goredis.New(shards.Config{Distribution: "jump", HashTag: "{}"},
		kolco.Node{ID: "shard-a", Addr: "10.0.0.1:6379"},
		kolco.Node{ID: "shard-b", Addr: "10.0.0.2:6379"},
		kolco.Node{ID: "shard-c", Addr: "10.0.0.3:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	opt := sh.Options(&redis.RingOptions{})
	// rdb := redis.NewRing(opt), or sh.NewRing(opt) to pass on later
	// membership changes; here we call the hash as go-redis does.
	all := opt.NewConsistentHash([]string{"shard-a", "shard-b", "shard-c"})
	bDown := opt.NewConsistentHash([]string{"shard-a", "shard-c"})
	for _, key := range []string{"user:1", "user:2", "user:3", "user:4"} {
		fmt.Println(key, all.Get(key), bDown.Get(key))
	}
	// Output:
	// user:1 shard-b shard-c
	// user:2 shard-a shard-a
	// user:3 shard-c shard-c
	// user:4 shard-b shard-c
}
