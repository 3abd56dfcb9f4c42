package jumpback_test

import (
	"testing"

	"github.com/kolco-dev/kolco/jumpback"
)

// TestBucketHash4j checks values printed by hash4j's
// ConsistentHashing.jumpBackHashSplitMix64() (github.com/dynatrace-oss/hash4j,
// the JumpBackHash implementation released with the paper), run under Java
// 17 on the keys and bucket counts below.
func TestBucketHash4j(t *testing.T) {
	buckets := []int{1, 2, 3, 7, 8, 9, 10, 100, 1000, 65536, 100001, 0x40000001, 1<<31 - 1}
	for _, c := range []struct {
		key  uint64
		want []int
	}{
		{0x0000000000000000, []int{0, 0, 0, 4, 7, 7, 7, 25, 313, 19887, 91636, 454938031, 454938031}},
		{0x0000000000000001, []int{0, 1, 1, 5, 5, 5, 5, 33, 492, 23745, 23745, 285879788, 285879788}},
		{0x000000000000002a, []int{0, 1, 2, 3, 3, 3, 3, 53, 166, 29222, 29222, 500642342, 500642342}},
		{0x00000000deadbeef, []int{0, 0, 0, 0, 7, 7, 7, 27, 923, 27547, 27547, 719304975, 719304975}},
		{0x0ddc0ffeebadf00d, []int{0, 1, 1, 1, 1, 1, 1, 68, 324, 11844, 11844, 506129988, 506129988}},
		{0xffffffffffffffff, []int{0, 1, 2, 2, 7, 7, 7, 73, 288, 27680, 27680, 618230135, 1533357088}},
		{0x9e3779b97f4a7c15, []int{0, 0, 2, 4, 4, 8, 8, 20, 618, 58868, 83279, 242785898, 1639540212}},
		{0x112210f47de98115, []int{0, 1, 1, 6, 6, 6, 6, 23, 946, 40370, 40370, 1042488754, 1493495527}},
	} {
		for i, n := range buckets {
			if got := jumpback.Bucket(c.key, n); got != c.want[i] {
				t.Errorf("Bucket(%#x, %d) = %d, hash4j gives %d", c.key, n, got, c.want[i])
			}
		}
	}
}
