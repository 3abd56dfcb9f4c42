package workload_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/kolco-dev/kolco/sim/workload"
)

// TestZipfStreamFollowsWeights: the hottest rank's frequency in the stream
// is within 5 binomial standard deviations of its weight.
func TestZipfStreamFollowsWeights(t *testing.T) {
	const n = 100_000
	w := workload.ZipfWeights(50, 1)
	got := 0
	for _, k := range workload.Stream(w, n, 7) {
		if k == 0 {
			got++
		}
	}
	if sd := math.Sqrt(w[0] * (1 - w[0]) / n); math.Abs(float64(got)/n-w[0]) > 5*sd {
		t.Errorf("rank 0 drawn %d of %d times, weight %v", got, n, w[0])
	}
}

func TestStreamWithoutKeysIsEmpty(t *testing.T) {
	if s := workload.Stream(nil, 10, 1); len(s) != 0 {
		t.Errorf("%d requests over no keys", len(s))
	}
}

// Requests for 1000 keys whose popularity follows Zipf's law with s = 0.99,
// as a cache sees them: the hottest key takes about 13% of the requests.
func ExampleStream() {
	w := workload.ZipfWeights(1000, 0.99)
	hot := 0
	for _, rank := range workload.Stream(w, 100_000, 1) {
		if rank == 0 {
			hot++
		}
	}
	fmt.Printf("hottest key: weight %.3f, drawn %.2f of the time\n", w[0], float64(hot)/100_000)
	// Output:
	// hottest key: weight 0.129, drawn 0.13 of the time
}
