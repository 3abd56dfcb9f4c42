package jumpback_test

import (
	"fmt"

	"github.com/kolco-dev/kolco/jumpback"
)

// Growing from 10 to 11 buckets moves a key only to the new bucket 10.
func ExampleBucket() {
	for _, key := range []uint64{1, 2, 3, 4, 5} {
		fmt.Println(jumpback.Bucket(key, 10), jumpback.Bucket(key, 11))
	}
	// Output:
	// 5 5
	// 0 0
	// 9 9
	// 0 10
	// 6 6
}
