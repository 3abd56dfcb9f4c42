package envoy_test

import (
	"fmt"

	"github.com/kolco-dev/kolco/compat/envoy"
)

// Rebuild the ring of Envoy's RingHashLoadBalancerTest.Basic (six hosts,
// minimum ring size 12) and ask it the questions that test asks; the answers
// are the ones Envoy's test expects.
func Example() {
	var hosts []envoy.Host
	for port := 90; port <= 95; port++ {
		hosts = append(hosts, envoy.Host{Addr: fmt.Sprintf("127.0.0.1:%d", port)})
	}
	r, err := envoy.NewRing(hosts, envoy.RingConfig{MinRingSize: 12})
	if err != nil {
		panic(err)
	}
	for _, h := range []uint64{0, 3551244743356806947, 3551244743356806948} {
		fmt.Println(h, hosts[r.IndexHash(h)].Addr)
	}
	// Output:
	// 0 127.0.0.1:94
	// 3551244743356806947 127.0.0.1:95
	// 3551244743356806948 127.0.0.1:93
}
