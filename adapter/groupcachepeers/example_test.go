package groupcachepeers_test

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/groupcachepeers"
	"github.com/kolco-dev/kolco/adapter/shards"
)

// The peer picker of the process serving as cache-a. In a program, it
// replaces groupcache.NewHTTPPool:
//
//	groupcache.RegisterPeerPicker(func() groupcache.PeerPicker { return peers })
//	http.Handle(groupcachepeers.DefaultBasePath, peers)
func Example() {
	peers, err := groupcachepeers.New("cache-a", shards.Config{Distribution: "ring"},
		kolco.Node{ID: "cache-a", Addr: "http://10.0.0.1:8000"},
		kolco.Node{ID: "cache-b", Addr: "http://10.0.0.2:8000"},
		kolco.Node{ID: "cache-c", Addr: "http://10.0.0.3:8000"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, key := range []string{"user:1", "user:2", "user:5", "user:6", "user:7"} {
		_, remote := peers.PickPeer(key)
		i, _ := peers.Table().Index(key)
		fmt.Println(key, peers.Table().Node(i).ID, "remote:", remote)
	}
	// Output:
	// user:1 cache-a remote: false
	// user:2 cache-b remote: true
	// user:5 cache-c remote: true
	// user:6 cache-b remote: true
	// user:7 cache-c remote: true
}
