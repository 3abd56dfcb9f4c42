package pymemcache_test

import (
	"fmt"

	"github.com/kolco-dev/kolco/compat/pymemcache"
)

// The servers as given to pymemcache's HashClient.
func Example() {
	pool, err := pymemcache.New([]string{"10.0.0.1:11211", "10.0.0.2", "[::1]:11212"})
	if err != nil {
		panic(err)
	}
	fmt.Println(pool.Names())
	n, _ := pool.Locate("user:42")
	fmt.Println(n.ID == pool.Names()[pool.Index([]byte("user:42"))])
	// Output:
	// [10.0.0.1:11211 10.0.0.2:11211 ::1:11212]
	// true
}
