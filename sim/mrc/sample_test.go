package mrc_test

import (
	"fmt"
	"io"
	"math"
	"testing"

	"github.com/kolco-dev/kolco/sim/mrc"
	"github.com/kolco-dev/kolco/sim/trace"
	"github.com/kolco-dev/kolco/sim/workload"
)

// zipfReader serves reads of keys "key:RANK" of 100-byte values, one a
// millisecond, in the order of a drawn stream of ranks.
type zipfReader struct {
	ranks []int32
	i     int
}

func (z *zipfReader) Next() (trace.Request, error) {
	if z.i == len(z.ranks) {
		return trace.Request{}, io.EOF
	}
	z.i++
	return trace.Request{Time: int64(z.i) * 1e6, Key: fmt.Sprintf("key:%d", z.ranks[z.i-1]), Size: 100, Command: "get", Op: trace.Read}, nil
}

func (z *zipfReader) Stats() trace.Stats { return trace.Stats{} }

// TestSampledCurve: 150 000 reads over 40 000 keys of Zipf 0.9
// popularity, sampled down to 4 096 of the 28 000 keys they request (a
// rate of 15%), give both policies' miss ratios within 2 points of the
// whole trace's at sizes from 54% to 23% missed (measured: 0.7 points at
// most with this seed).
func TestSampledCurve(t *testing.T) {
	ranks := workload.Stream(workload.ZipfWeights(40_000, 0.9), 150_000, 5)
	whole, err := trace.Summarize(&zipfReader{ranks: ranks}, trace.Options{SampleKeys: 40_000})
	if err != nil {
		t.Fatal(err)
	}
	sampled, err := trace.Summarize(&zipfReader{ranks: ranks}, trace.Options{SampleKeys: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if whole.Sample.Rate != 1 || sampled.Sample.Rate > 0.15 {
		t.Fatalf("rates %v and %v, want 1 and under 0.15", whole.Sample.Rate, sampled.Sample.Rate)
	}
	sizes := []float64{0.3e6, 1e6, 3e6}
	for _, p := range []mrc.Policy{mrc.LRU, mrc.Memcached} {
		exact, err := mrc.Curve(mrc.FromProfile(whole, mrc.MemcachedFootprint, nil), p, sizes)
		if err != nil {
			t.Fatal(err)
		}
		got, err := mrc.Curve(mrc.FromProfile(sampled, mrc.MemcachedFootprint, nil), p, sizes)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%v: whole %.4f, sampled at %.4f: %.4f", p, exact, sampled.Sample.Rate, got)
		for i := range sizes {
			if math.Abs(got[i]-exact[i]) > 0.02 || exact[i] < 0.1 || exact[i] > 0.8 {
				t.Errorf("%v at %v bytes: sampled %.4f, whole %.4f", p, sizes[i], got[i], exact[i])
			}
		}
	}
}
