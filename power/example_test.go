package power_test

import (
	"fmt"

	"github.com/kolco-dev/kolco/power"
)

// Growing from 10 to 11 buckets moves a key only to the new bucket 10.
func ExampleBucket() {
	for key := uint64(1); key <= 5; key++ {
		h := key * 0x9e3779b97f4a7c15 // a key hash spreads over all 64 bits
		fmt.Println(power.Bucket(h, 10), power.Bucket(h, 11))
	}
	// Output:
	// 4 4
	// 2 10
	// 8 8
	// 6 6
	// 9 9
}
