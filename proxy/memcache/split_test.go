package memcache_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// TestSplitterParts: each server's part carries its keys in the order of
// the request, with gat's exptime, and the parts come in the order of
// their first key.
func TestSplitterParts(t *testing.T) {
	req := &memcache.Request{Cmd: memcache.CmdGat, Exptime: 5, Keys: keys("a", "b", "c", "d", "e")}
	server := map[string]int{"a": 7, "b": 2, "c": 7, "d": 0, "e": 2}
	var s memcache.Splitter
	s.Split(req, func(k []byte) int { return server[string(k)] })
	want := []struct {
		server, keys int
		line         string
	}{{7, 2, "gat 5 a c\r\n"}, {2, 2, "gat 5 b e\r\n"}, {0, 1, "gat 5 d\r\n"}}
	parts := s.Parts()
	if len(parts) != len(want) {
		t.Fatalf("%d parts, want %d", len(parts), len(want))
	}
	for i, w := range want {
		if parts[i].Server != w.server || parts[i].Keys != w.keys {
			t.Errorf("part %d: %+v, want server %d with %d keys", i, parts[i], w.server, w.keys)
		}
		if got := string(s.AppendPart(nil, i)); got != w.line {
			t.Errorf("part %d: %q, want %q", i, got, w.line)
		}
	}
}

// TestSplitterValues holds Split and Value to a naive model over random
// requests: every key's value comes back from its own server's reply, a
// miss or a failed server's key gives none, and the Splitter is reused
// from request to request.
func TestSplitterValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var s memcache.Splitter
	for round := range 500 {
		n := 1 + rng.IntN(40)
		servers := 1 + rng.IntN(6)
		var names []string
		for i := range n {
			names = append(names, fmt.Sprintf("k%d-%d", rng.IntN(30), i%3)) // repeated keys too
		}
		req := &memcache.Request{Cmd: memcache.CmdGets, Keys: keys(names...)}
		owner := func(k []byte) int { return int(k[1]) % servers }
		s.Split(req, owner)
		// Each server answers its part: a value for some keys, and a
		// failed server nothing.
		parts := s.Parts()
		replies := make([]memcache.Reply, len(parts))
		want := make([]string, n)
		for p := range parts {
			if rng.IntN(8) == 0 {
				continue // failed: its keys are misses
			}
			var b bytes.Buffer
			var spans []memcache.Span
			line := string(s.AppendPart(nil, p))
			for _, k := range strings.Fields(strings.TrimSpace(line))[1:] {
				if rng.IntN(3) == 0 {
					continue // a miss
				}
				start := b.Len()
				fmt.Fprintf(&b, "VALUE %s 0 %d 9\r\n", k, len(k)+1)
				spans = append(spans, memcache.Span{KeyStart: start + 6, KeyEnd: start + 6 + len(k)})
				fmt.Fprintf(&b, "%s!\r\n", k)
				spans[len(spans)-1].Start, spans[len(spans)-1].End = start, b.Len()
			}
			b.WriteString("END\r\n")
			replies[p] = memcache.Reply{Data: b.Bytes(), Spans: spans}
		}
		// The model: the i-th key's value is the next one for that key in
		// its server's reply.
		next := make([]int, len(parts))
		for i, k := range req.Keys {
			p := s.PartOf(i)
			if parts[p].Server != owner(k) {
				t.Fatalf("round %d: key %s in the part of server %d, owned by %d", round, k, parts[p].Server, owner(k))
			}
			r := replies[p]
			if next[p] < len(r.Spans) {
				sp := r.Spans[next[p]]
				if string(r.Data[sp.KeyStart:sp.KeyEnd]) == string(k) {
					want[i] = string(r.Data[sp.Start:sp.End])
					next[p]++
				}
			}
		}
		s.Begin(replies)
		for i := range req.Keys {
			if got := string(s.Value(i)); got != want[i] {
				t.Fatalf("round %d: key %d (%s): %q, want %q", round, i, req.Keys[i], got, want[i])
			}
		}
	}
}

// TestSplitterDoesNotAllocate: splitting and reading back a request the
// Splitter has seen the like of allocates nothing.
func TestSplitterDoesNotAllocate(t *testing.T) {
	req := &memcache.Request{Cmd: memcache.CmdGet, Keys: keys("a", "b", "c", "d")}
	server := func(k []byte) int { return int(k[0]) % 3 }
	var s memcache.Splitter
	buf := make([]byte, 0, 64)
	replies := make([]memcache.Reply, 3)
	n := testing.AllocsPerRun(100, func() {
		s.Split(req, server)
		for i := range s.Parts() {
			buf = s.AppendPart(buf[:0], i)
		}
		s.Begin(replies[:len(s.Parts())])
		for i := range req.Keys {
			_ = s.Value(i)
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per request", n)
	}
}

func keys(names ...string) [][]byte {
	out := make([][]byte, len(names))
	for i, n := range names {
		out[i] = []byte(n)
	}
	return out
}
