package trace_test

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/sim/trace"
)

// sliceReader serves requests from a slice.
type sliceReader struct{ reqs []trace.Request }

func (s *sliceReader) Next() (trace.Request, error) {
	if len(s.reqs) == 0 {
		return trace.Request{}, io.EOF
	}
	r := s.reqs[0]
	s.reqs = s.reqs[1:]
	return r, nil
}

func (s *sliceReader) Stats() trace.Stats { return trace.Stats{Keyless: 3} }

func TestSummarize(t *testing.T) {
	r := &sliceReader{[]trace.Request{
		{Time: 5e9, Key: "a", Size: -1, Command: "get", Op: trace.Read, Result: trace.Miss},
		{Time: 6e9, Key: "a", Size: 10, Command: "set", Op: trace.Write},
		{Time: 4e9, Key: "b", Size: 3, Command: "get", Op: trace.Read, Result: trace.Hit},
		{Time: 9e9, Key: "a", Size: -1, Command: "get", Op: trace.Read, Result: trace.Hit},
		{Time: 9e9, Key: "a", Size: -1, Command: "del", Op: trace.Delete},
	}}
	p, err := trace.Summarize(r, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Start != 4e9 || p.End != 9e9 || p.Seconds() != 5 || p.Requests != 5 || p.Reads != 3 || p.Writes != 1 || p.Deletes != 1 ||
		p.Hits != 2 || p.Misses != 1 || p.Stats.Keyless != 3 || !p.Results() {
		t.Errorf("profile %+v", p)
	}
	want := []trace.KeyStats{
		{Key: "a", Requests: 4, Reads: 2, Hits: 1, Misses: 1, Size: 10},
		{Key: "b", Requests: 1, Reads: 1, Hits: 1, Size: 3},
	}
	if fmt.Sprint(p.Keys) != fmt.Sprint(want) {
		t.Errorf("keys %+v, want %+v", p.Keys, want)
	}
	if p.Sample.Rate != 1 || len(p.Sample.Refs) != 5 {
		t.Errorf("two keys, a sample of 65536: every request sampled; got rate %v, %d refs", p.Sample.Rate, len(p.Sample.Refs))
	}
	if _, err := trace.Summarize(&sliceReader{}, trace.Options{}); !errors.Is(err, trace.ErrEmpty) {
		t.Errorf("an empty trace: %v, want ErrEmpty", err)
	}
}

// TestSampleFixedSize: 40 000 keys, a sample of 1 000: the sample holds
// the keys of the 1 000 least sampling hashes, each with every one of its
// requests, and its rate is what that threshold covers: 2.5%, within the
// spread of the 1000th least of 40 000 uniform hashes (±10% is over three
// standard deviations, 1/sqrt(1000) = 3%).
func TestSampleFixedSize(t *testing.T) {
	var reqs []trace.Request
	for round := range 2 {
		for i := range 40_000 {
			reqs = append(reqs, trace.Request{Time: int64(round), Key: "key:" + strconv.Itoa(i), Size: -1, Command: "get", Op: trace.Read})
		}
	}
	p, err := trace.Summarize(&sliceReader{reqs}, trace.Options{SampleKeys: 1000})
	if err != nil {
		t.Fatal(err)
	}
	s := p.Sample
	if math.Abs(s.Rate/0.025-1) > 0.1 || s.Requests != 80_000 {
		t.Errorf("rate %v over %d requests, want 0.025 ± 10%% over 80000", s.Rate, s.Requests)
	}
	perKey := map[int32]int{}
	for _, r := range s.Refs {
		perKey[r.Key]++
	}
	if len(perKey) != 1000 {
		t.Errorf("%d keys sampled, want 1000", len(perKey))
	}
	limit := s.Rate * math.Pow(2, 64)
	for k, n := range perKey {
		if n != 2 || float64(trace.SampleHash(p.Keys[k].Key)) >= limit {
			t.Errorf("key %q: %d requests sampled of 2, hash %d over the threshold %g", p.Keys[k].Key, n, trace.SampleHash(p.Keys[k].Key), limit)
		}
	}
	missed := 0
	for _, k := range p.Keys {
		if float64(trace.SampleHash(k.Key)) < limit*(1-1e-9) {
			missed++
		}
	}
	if missed != 1000 {
		t.Errorf("%d keys hash under the threshold, want the 1000 sampled", missed)
	}
}

func TestSummarizeRefusesANegativeSample(t *testing.T) {
	r, _ := trace.Open(strings.NewReader("#kolco-trace v1\n1 k 1 get hit\n"), trace.Kolco)
	if _, err := trace.Summarize(r, trace.Options{SampleKeys: -1}); err == nil {
		t.Error("no error for a sample of -1 keys")
	}
}
