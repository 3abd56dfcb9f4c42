package proxy

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kolco-dev/kolco/sim/trace"
)

// TestSampleTopKeysFindHeavyHitters: on a Zipf stream, every key with
// more than 1/k of the weight holds a counter, its count over its true
// weight by at most its error, as Space-Saving promises; and every
// counter is found again by its hash after the table's many removals.
func TestSampleTopKeysFindHeavyHitters(t *testing.T) {
	t.Parallel()
	for _, k := range []int{8, 32} {
		t.Run(fmt.Sprint("k=", k), func(t *testing.T) {
			const n = 200_000
			z := rand.NewZipf(rand.New(rand.NewPCG(1, 2)), 1.1, 1, 20_000)
			top := newTopKeys(k)
			truth := map[string]uint64{}
			for range n {
				key := fmt.Appendf(nil, "key:%d", z.Uint64())
				top.add(trace.SampleHashBytes(key), key, 1)
				truth[string(key)]++
			}
			got := map[string]hotKey{}
			for _, h := range top.top() {
				got[h.key] = h
			}
			if len(got) != k {
				t.Fatalf("%d counters, want %d", len(got), k)
			}
			for key, c := range truth {
				h, ok := got[key]
				switch {
				case c > n/uint64(k) && !ok:
					t.Errorf("%s: %d requests (over n/k = %d) and no counter", key, c, n/k)
				case ok && (h.count < c || h.count-h.error > c):
					t.Errorf("%s: counted %d with error %d, true %d", key, h.count, h.error, c)
				}
			}
			for i, c := range top.counters {
				if top.find(c.hash) != int32(i) {
					t.Errorf("counter %d (%s) not found by its hash", i, c.key)
				}
			}
		})
	}
}

// TestSampleTopKeysByWeight: the summary by bytes ranks keys by their
// values' bytes, not their requests.
func TestSampleTopKeysByWeight(t *testing.T) {
	top := newTopKeys(4)
	for i := range 1000 {
		key := fmt.Appendf(nil, "small:%d", i%10)
		top.add(trace.SampleHashBytes(key), key, 10)
	}
	big := []byte("big")
	for range 50 {
		top.add(trace.SampleHashBytes(big), big, 100_000)
	}
	got := top.top()[0]
	if got.key != "big" || got.count < 5_000_000 || got.count-got.error > 5_000_000 {
		t.Errorf("heaviest %q with %d bytes (error %d), want big with 5000000", got.key, got.count, got.error)
	}
}

// testSample returns a sample of the settings.
func testSample(t *testing.T, tr Traffic) *trafficSample {
	t.Helper()
	tr.Enabled = true
	cfg := &PoolConfig{Listen: "127.0.0.1:0", Traffic: tr}
	s := newTrafficSample(cfg)
	if s == nil {
		t.Fatal("no sample with traffic.enabled")
	}
	return s
}

// TestSampleTraceKeepsTheLatest: the trace holds the latest requests in
// the order they came, written and read back in kolco's trace format.
func TestSampleTraceKeepsTheLatest(t *testing.T) {
	s := testSample(t, Traffic{Requests: 100})
	long := bytes.Repeat([]byte("k"), 300) // longer than a slot's room
	for i := range 250 {
		key := fmt.Appendf(nil, "key %d", i) // a space, percent-encoded in the file
		if i == 240 {
			key = long
		}
		s.record(int64(i), key, int64(i), "set", trace.Write, trace.Unknown)
	}
	reqs := s.requests()
	if len(reqs) != 100 {
		t.Fatalf("%d requests, want the latest 100", len(reqs))
	}
	for i, r := range reqs {
		want := fmt.Sprintf("key %d", 150+i)
		if 150+i == 240 {
			want = string(long)
		}
		if r.Key != want || r.Size != int64(150+i) || r.Command != "set" || r.Op != trace.Write {
			t.Fatalf("request %d: %+v, want key %q", i, r, want)
		}
	}
	var file bytes.Buffer
	w := trace.NewWriter(&file)
	if err := w.Comment("from a test"); err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	rd, err := trace.Open(&file, trace.Auto)
	if err != nil {
		t.Fatal(err)
	}
	for i := range reqs {
		got, err := rd.Next()
		if err != nil {
			t.Fatal(err)
		}
		if got.Key != reqs[i].Key || got.Size != reqs[i].Size || got.Time != reqs[i].Time {
			t.Fatalf("read back %+v, want %+v", got, reqs[i])
		}
	}
}

// TestSampleKeyShare: with key_share, the trace holds every request of
// the keys whose sampling hash is within the share, and none of the
// others; the reads and misses are counted for every key.
func TestSampleKeyShare(t *testing.T) {
	s := testSample(t, Traffic{Requests: 1 << 16, KeyShare: 0.25})
	want := 0
	for i := range 4000 {
		key := fmt.Appendf(nil, "key:%d", i%1000)
		if trace.SampleHashBytes(key) <= s.threshold {
			want++
		}
		s.record(int64(i), key, -1, "get", trace.Read, trace.Miss)
	}
	reqs := s.requests()
	if len(reqs) != want {
		t.Fatalf("%d requests traced, want %d", len(reqs), want)
	}
	if share := float64(want) / 4000; share < 0.2 || share > 0.3 {
		t.Errorf("traced %.2f of the requests with key_share 0.25", share)
	}
	for _, r := range reqs {
		if trace.SampleHash(r.Key) > s.threshold {
			t.Fatalf("%q traced outside the share", r.Key)
		}
	}
	if s.reads.Load() != 4000 || s.misses.Load() != 4000 {
		t.Errorf("%d reads and %d misses counted, want 4000 each", s.reads.Load(), s.misses.Load())
	}
}

// TestSampleRecordAllocations: recording a request allocates nothing
// once the trace's slots have held a key.
func TestSampleRecordAllocations(t *testing.T) {
	s := testSample(t, Traffic{Requests: 64, TopKeys: 8})
	keys := make([][]byte, 100)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "user:%d", i)
	}
	i := 0
	record := func() {
		s.record(1, keys[i%len(keys)], 100, "get", trace.Read, trace.Hit)
		i++
	}
	for range 1000 {
		record()
	}
	if n := testing.AllocsPerRun(5000, record); n != 0 {
		t.Errorf("%v allocations per request recorded, want 0", n)
	}
}
