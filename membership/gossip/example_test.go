package gossip_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/gossip"
)

// A sidecar holds its node in the pool; a program joins as an observer
// through it and follows the pool's nodes with a ring.
func Example() {
	sidecar, err := gossip.Join(gossip.Config{Bind: "127.0.0.1:0",
		Meta: gossip.Meta{Role: gossip.RoleNode, Node: kolco.Node{ID: "mc1", Addr: "127.0.0.1:11211"}}})
	if err != nil {
		panic(err)
	}
	defer sidecar.Close()
	pool, err := gossip.Join(gossip.Config{Bind: "127.0.0.1:0", Seeds: []string{sidecar.Addr()}})
	if err != nil {
		panic(err)
	}
	defer pool.Close()

	v, err := pool.Read(context.Background())
	fmt.Println(v.IDs(), err)

	_, err = membership.Follow(context.Background(), pool, membership.FollowConfig{Algorithm: "jump"})
	fmt.Println(errors.Is(err, membership.ErrUnordered)) // jump places by the order of changes
	// Output:
	// [mc1] <nil>
	// true
}
