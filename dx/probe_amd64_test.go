//go:build amd64 && !purego

package dx

import (
	"math/rand/v2"
	"testing"
)

// TestProbeCRCBound checks the assembly probe loop against the same loop
// in Go when it may give up: with limits of 0 to 8 probes it returns the
// first working slot among them or -1, and -1 when no slot works.
func TestProbeCRCBound(t *testing.T) {
	if !hasCRC {
		t.Skip("no SSE 4.2")
	}
	rng := rand.New(rand.NewPCG(38, 2))
	slot := make([]int32, 64)
	for b := range slot {
		slot[b] = -1
		if rng.IntN(8) == 0 {
			slot[b] = int32(b)
		}
	}
	probe := func(kh uint64, limit int) int {
		seed := uint32(kh)*421757 + 1
		v := crc32c(seed, kh)
		for range limit {
			if b := int(v & 63); slot[b] >= 0 {
				return b
			}
			v = crc32c(seed, uint64(v))
		}
		return -1
	}
	for range 5000 {
		kh := rng.Uint64()
		for limit := range 9 {
			if got, want := probeCRC(kh, slot, limit), probe(kh, limit); got != want {
				t.Fatalf("key hash %#x, limit %d: %d, want %d", kh, limit, got, want)
			}
		}
	}
	none := make([]int32, 16)
	for b := range none {
		none[b] = -1
	}
	if got := probeCRC(rng.Uint64(), none, 4*len(none)); got != -1 {
		t.Errorf("no working slot: %d, want -1", got)
	}
}
