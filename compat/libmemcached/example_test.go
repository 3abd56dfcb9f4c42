package libmemcached_test

import (
	"fmt"

	"github.com/kolco-dev/kolco/compat/libmemcached"
)

// A client that sets MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED and adds three
// servers with memcached_server_add_with_weight.
func Example() {
	pool, err := libmemcached.New(libmemcached.Config{Distribution: libmemcached.KetamaWeighted}, []libmemcached.Server{
		{Host: "10.0.0.1", Port: 11211, Weight: 1},
		{Host: "10.0.0.2", Port: 11211, Weight: 1},
		{Host: "10.0.0.3", Port: 11212, Weight: 2},
	})
	if err != nil {
		panic(err)
	}
	n, _ := pool.Locate("user:42")
	fmt.Println(n.ID == pool.Servers()[pool.Index([]byte("user:42"))].Addr())
	fmt.Println(len(pool.Nodes()))
	// Output:
	// true
	// 3
}
