package redis

import (
	"strings"
	"testing"
)

// sink keeps benchmark results alive.
var sink []byte

func BenchmarkReader(b *testing.B) {
	for _, s := range requestStreams {
		b.Run(s.name, func(b *testing.B) {
			r := NewReader(&loop{b: []byte(s.in)}, Limits{})
			var req Request
			b.SetBytes(int64(len(s.in)))
			b.ReportAllocs()
			for b.Loop() {
				if err := r.Read(&req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkReplyReader(b *testing.B) {
	for _, s := range replyStreams {
		b.Run(s.name, func(b *testing.B) {
			rr := NewReplyReader(&loop{b: []byte(s.in)}, ReplyLimits{})
			var elems []Span
			b.SetBytes(int64(len(s.in)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if sink, elems, err = rr.Read(sink[:0], elems[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAppendRequest(b *testing.B) {
	for _, s := range requestStreams {
		b.Run(s.name, func(b *testing.B) {
			var req Request
			if err := NewReader(strings.NewReader(s.in), Limits{}).Read(&req); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				sink = AppendRequest(sink[:0], &req)
			}
		})
	}
}

func BenchmarkAppendBulk(b *testing.B) {
	v := []byte(strings.Repeat("v", 100))
	b.ReportAllocs()
	for b.Loop() {
		sink = AppendBulk(sink[:0], v)
	}
}

// BenchmarkSplitMerge splits an MGET of n keys over 3 servers, writes the
// parts and merges their replies: the proxy's own work for one MGET.
func BenchmarkSplitMerge(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		b.Run("mget-"+itoa(n), func(b *testing.B) {
			var req Request
			if err := NewReader(strings.NewReader(mgetRequest(n)), Limits{}).Read(&req); err != nil {
				b.Fatal(err)
			}
			server := func(k []byte) int { return int(k[len(k)-1]) % 3 }
			var s Splitter
			if err := s.Split(&req, server); err != nil {
				b.Fatal(err)
			}
			replies := make([]Reply, len(s.Parts()))
			for i, p := range s.Parts() {
				vals := make([]string, p.Keys)
				for j := range vals {
					vals[j] = "value"
				}
				data, elems, err := NewReplyReader(strings.NewReader(string(bulks(vals...))), ReplyLimits{}).Read(nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				replies[i] = Reply{Data: data, Elems: elems}
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := s.Split(&req, server); err != nil {
					b.Fatal(err)
				}
				sink = sink[:0]
				for i := range s.Parts() {
					sink = s.AppendPart(sink, i)
				}
				var err error
				if sink, err = s.Merge(sink[:0], replies); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
